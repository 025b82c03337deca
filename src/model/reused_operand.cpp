// The packed copies behind ReusedOperandB (see reused_operand.hpp).
//
// Why forgetting at the end of each Promise is what keeps the copies right: the model promises the head's
// weight only while the head's unit is acquired (one head pass), and no store changes a unit while it is
// acquired. The optimizer steps, and the FSDP store re-gathers units (possibly into the same addresses),
// only between passes, hence between Promises; so a copy is never read under a later Promise than the one
// that packed it, and the address is never trusted across passes.
#include "reused_operand.hpp"

#include <algorithm>

#include "llmtrain/core/error.hpp"

namespace llmtrain::model {

ReusedOperandB::Promise::Promise(ReusedOperandB& reuse, const float* data) : reuse_(reuse) {
  LLMTRAIN_CHECK(data != nullptr, "ReusedOperandB::Promise needs a matrix");
  LLMTRAIN_CHECK(reuse.data_ == nullptr, "this ReusedOperandB already has a Promise alive (one at a time)");
  reuse.data_ = data;
}

ReusedOperandB::Promise::~Promise() {
  auto& packings = reuse_.packings_;
  packings.erase(std::remove_if(packings.begin(), packings.end(), [](const Packing& p) { return !p.used; }),
                 packings.end());
  for (Packing& p : packings) p.packed.filled = p.used = false;
  reuse_.data_ = nullptr;
}

isa::PackedB* ReusedOperandB::packing(bool trans, long ld, long n, long k) {
  for (Packing& p : packings_)
    if (p.trans == trans && p.ld == ld && p.n == n && p.k == k) {
      p.used = true;
      return &p.packed;
    }
  Packing& p = packings_.emplace_back(Packing{trans, ld, n, k, {}, {}, true});
  p.values = Kokkos::View<unsigned short*, Kokkos::HostSpace>(Kokkos::view_alloc(Kokkos::WithoutInitializing,
                                                                                  "reused_operand_b"),
                                                              std::size_t(isa::gemm_bf16_packed_b_size(n, k)));
  p.packed = isa::PackedB{p.values.data(), false};
  return &p.packed;
}

}  // namespace llmtrain::model
