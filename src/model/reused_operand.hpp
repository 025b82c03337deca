// A promise to the host bf16 products that one matrix stays the same for a while, so that the products
// that multiply by it (as op(B)) round and pack it once instead of once per call: the output head's weight
// enters every row chunk of logits, forward and for dX, in a step. Private to the model.
//
// While a ReusedOperandB for `data` is alive, each bf16 product on an AVX512_BF16 CPU whose B is `data`
// keeps the whole of op(B) packed (2 bytes per element, one copy per (transposition, ld, n, k)) and
// packs it only on its first call: results are bitwise those of packing every time. The caller must not
// change `data` meanwhile. Buffers are kept for the next guard; fp32, emulated and CUDA products ignore it.
#pragma once

#include "isa/gemm_bf16_kernel.hpp"

namespace llmtrain::model {

class ReusedOperandB {
 public:
  explicit ReusedOperandB(const float* data);  // one at a time: a second while one is alive throws
  ~ReusedOperandB();
  ReusedOperandB(const ReusedOperandB&) = delete;
  ReusedOperandB& operator=(const ReusedOperandB&) = delete;
};

// The packed copy for a product with op(B) = b (transposed or not, leading dimension ld, k x n), or null
// when no ReusedOperandB covers b.
isa::PackedB* reused_packing(const float* b, bool trans, long ld, long n, long k);

}  // namespace llmtrain::model
