// The packed bf16 copies of one matrix that several products of a pass take as op(B), owned by the caller
// that multiplies by it: the host backend keeps one for the output head's weight, which enters every
// 256-row chunk of logits, forward and for dX. Private to the model.
//
// While a Promise for `data` is alive, each bf16 product given this object (gemm_reusing_b) on an
// AVX512_BF16 CPU keeps the whole of op(B) packed (2 bytes per element, one copy per (transposition, ld, n,
// k)) and packs it only on its first call: results are bitwise those of packing every time. The caller must
// not change `data` meanwhile. The end of the Promise forgets what was packed, so the next one packs afresh
// even when the matrix has changed at the same address. The buffers are Kokkos host Views (counted by the
// memory tracker, mem.peak_bytes) kept for the next Promise, the same products coming back every step; a
// copy that a Promise did not use is freed at its end.
// fp32, emulated and CUDA products ignore the object.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <vector>

#include "isa/gemm_bf16_kernel.hpp"
#include "llmtrain/model/gemm.hpp"

namespace llmtrain::model {

class ReusedOperandB {
 public:
  class Promise {
   public:
    Promise(ReusedOperandB& reuse, const float* data);  // one at a time per ReusedOperandB
    ~Promise();
    Promise(const Promise&) = delete;
    Promise& operator=(const Promise&) = delete;

   private:
    ReusedOperandB& reuse_;
  };

  bool promises(const float* b) const { return b != nullptr && b == data_; }
  // The packed copy for a product with op(B) = the promised matrix (transposed or not, leading dimension ld,
  // k x n).
  isa::PackedB* packing(bool trans, long ld, long n, long k);

 private:
  struct Packing {
    bool trans;
    long ld, n, k;
    Kokkos::View<unsigned short*, Kokkos::HostSpace> values;
    isa::PackedB packed;
    bool used;  // by a product under the current Promise
  };
  const float* data_ = nullptr;     // the matrix promised constant, while a Promise is alive
  std::vector<Packing> packings_;  // those the last Promise used
};

// gemm<float>() whose op(B) is the matrix promised to `reuse` (checked: another matrix, or none promised, throws).
void gemm_reusing_b(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                    const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
                    std::int64_t ldc, Precision precision, ReusedOperandB& reuse);

}  // namespace llmtrain::model
