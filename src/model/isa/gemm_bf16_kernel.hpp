// The two bf16 products behind the gemm dispatch (private to the model; tests call both): the AVX512_BF16
// kernel (gemm_bf16_avx512.cpp), called only on CPUs that have the instructions, and the emulation used
// elsewhere (gemm_host.cpp). Plain types only: this header is included by a file built with AVX-512 flags.
#pragma once

namespace llmtrain::model::isa {

// The whole of one op(B) packed for the kernel, kept by a caller that multiplies by it several times
// (a ReusedOperandB, reused_operand.hpp): `data` holds gemm_bf16_packed_b_size(n, k) values. A product given it
// unfilled packs op(B) into it and marks it filled; given it filled, reads op(B) from it alone.
struct PackedB {  // an aggregate: no inline constructor for the AVX-512 object to define
  unsigned short* data;
  bool filled;
};
long gemm_bf16_packed_b_size(long n, long k);

// C[m x n] = alpha * bf16(op(A)) * bf16(op(B)) + beta * C, row-major, fp32 accumulation; calls
// between_blocks (unless null) after each block of rows, so that communication progresses during the product.
void gemm_bf16_avx512(bool trans_a, bool trans_b, long m, long n, long k, float alpha, const float* a, long lda,
                      const float* b, long ldb, float beta, float* c, long ldc, PackedB* reuse = nullptr,
                      void (*between_blocks)() = nullptr);

// The same product on any CPU: operands rounded to bf16 values held in fp32, then sgemm (exact products).
void gemm_bf16_emulated(bool trans_a, bool trans_b, long m, long n, long k, float alpha, const float* a, long lda,
                        const float* b, long ldb, float beta, float* c, long ldc);

}  // namespace llmtrain::model::isa
