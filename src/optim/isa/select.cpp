// Picks the widest AdamW variant the running CPU supports (see adamw_kernels.hpp).
#include "adamw_kernels.hpp"

namespace llmtrain::optim::isa {

const AdamWKernel& adamw_for(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::Avx512:
      return adamw_avx512();
    case CpuIsa::Avx2:
      return adamw_avx2();
    case CpuIsa::Sse2:
      break;
  }
  return adamw_sse2();
}

const AdamWKernel& adamw_kernel() {
  static const AdamWKernel& chosen = adamw_for(widest_cpu_isa());
  return chosen;
}

}  // namespace llmtrain::optim::isa
