// Picks the widest element-wise kernel variant the running CPU supports (see kernels.hpp).
#include "kernels.hpp"
#include "llmtrain/core/cpu_isa.hpp"
#include "llmtrain/model/kernels_isa.hpp"

namespace llmtrain::model::isa {

const ElementwiseKernels& kernels_for(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::Avx512:
      return kernels_avx512();
    case CpuIsa::Avx2:
      return kernels_avx2();
    case CpuIsa::Sse2:
      break;
  }
  return kernels_sse2();
}

const ElementwiseKernels& kernels() {
  static const ElementwiseKernels& chosen = kernels_for(widest_cpu_isa());
  return chosen;
}

}  // namespace llmtrain::model::isa

const char* llmtrain::model::elementwise_isa() { return isa::kernels().isa; }
