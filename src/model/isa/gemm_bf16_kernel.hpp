// The two bf16 products behind the gemm dispatch (private to the model; tests call both): the AVX512_BF16
// kernel (gemm_bf16_avx512.cpp), called only on CPUs that have the instructions, and the emulation used
// elsewhere (gemm_host.cpp). Plain types only: this header is included by a file built with AVX-512 flags.
#pragma once

namespace llmtrain::model::isa {

// C[m x n] = alpha * bf16(op(A)) * bf16(op(B)) + beta * C, row-major, fp32 accumulation.
void gemm_bf16_avx512(bool trans_a, bool trans_b, long m, long n, long k, float alpha, const float* a, long lda,
                      const float* b, long ldb, float beta, float* c, long ldc);

// The same product on any CPU: operands rounded to bf16 values held in fp32, then sgemm (exact products).
void gemm_bf16_emulated(bool trans_a, bool trans_b, long m, long n, long k, float alpha, const float* a, long lda,
                        const float* b, long ldb, float beta, float* c, long ldc);

}  // namespace llmtrain::model::isa
