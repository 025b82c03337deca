// The fp32 product behind the gemm dispatch when communication must progress during it (private to the
// model; tests call it): our AVX-512 kernel (gemm_f32_avx512.cpp), called only on CPUs that run AVX-512.
// Plain types only: this header is included by a file built with AVX-512 flags.
#pragma once

namespace llmtrain::model::isa {

// C[m x n] = alpha * op(A) * op(B) + beta * C, row-major, fp32; calls between_blocks (unless null) after
// each block of rows, about every 25 MFLOP (kMC x kKC x kNC x 2).
void gemm_f32_avx512(bool trans_a, bool trans_b, long m, long n, long k, float alpha, const float* a, long lda,
                     const float* b, long ldb, float beta, float* c, long ldc, void (*between_blocks)() = nullptr);

}  // namespace llmtrain::model::isa
