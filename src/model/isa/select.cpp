// Picks the widest element-wise kernel variant the running CPU supports (see kernels.hpp).
#include "kernels.hpp"
#include "llmtrain/core/cpu_isa.hpp"
#include "llmtrain/model/kernels_isa.hpp"

namespace llmtrain::model::isa {

const ElementwiseKernels& kernels_for(CpuIsa isa) {
  static constexpr IsaVariants<ElementwiseKernels> kVariants{{kernels_sse2, kernels_avx2, kernels_avx512}};
  return kVariants(isa);
}

const ElementwiseKernels& kernels() {
  static const ElementwiseKernels& chosen = kernels_for(widest_cpu_isa());
  return chosen;
}

}  // namespace llmtrain::model::isa

const char* llmtrain::model::elementwise_isa() { return isa::kernels().isa; }
