// The packed copies behind ReusedOperandB (see reused_operand.hpp). One thread per process drives the
// products, as for the kernel's own packing scratch.
#include "reused_operand.hpp"

#include <algorithm>
#include <vector>

#include "llmtrain/core/error.hpp"

namespace llmtrain::model {
namespace {

struct Packing {
  bool trans;
  long ld, n, k;
  std::vector<unsigned short> values;
  isa::PackedB packed;
  bool used;  // by a product under the current guard
};

const float* g_data = nullptr;     // the matrix promised constant, while a guard is alive
std::vector<Packing> g_packings;  // those the last guard used: the same products come back every step

}  // namespace

ReusedOperandB::ReusedOperandB(const float* data) {
  LLMTRAIN_CHECK(data != nullptr, "ReusedOperandB needs a matrix");
  LLMTRAIN_CHECK(g_data == nullptr, "a ReusedOperandB is already alive (one at a time)");
  g_data = data;
}

ReusedOperandB::~ReusedOperandB() {
  g_data = nullptr;
  g_packings.erase(std::remove_if(g_packings.begin(), g_packings.end(), [](const Packing& p) { return !p.used; }),
                   g_packings.end());
  for (Packing& p : g_packings) p.packed.filled = p.used = false;
}

isa::PackedB* reused_packing(const float* b, bool trans, long ld, long n, long k) {
  if (b == nullptr || b != g_data) return nullptr;
  for (Packing& p : g_packings)
    if (p.trans == trans && p.ld == ld && p.n == n && p.k == k) {
      p.used = true;
      return &p.packed;
    }
  Packing& p = g_packings.emplace_back(Packing{trans, ld, n, k, {}, {}, true});
  p.values.resize(std::size_t(isa::gemm_bf16_packed_b_size(n, k)));
  p.packed = isa::PackedB{p.values.data(), false};
  return &p.packed;
}

}  // namespace llmtrain::model
