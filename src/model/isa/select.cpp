// Picks the widest element-wise kernel variant the running CPU supports (see kernels.hpp).
#include "kernels.hpp"
#include "llmtrain/model/kernels_isa.hpp"

namespace llmtrain::model::isa {

const ElementwiseKernels& kernels() {
  static const ElementwiseKernels& chosen = []() -> const ElementwiseKernels& {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
      return kernels_avx512();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return kernels_avx2();
    return kernels_sse2();
  }();
  return chosen;
}

}  // namespace llmtrain::model::isa

const char* llmtrain::model::elementwise_isa() { return isa::kernels().isa; }
