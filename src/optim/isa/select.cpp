// Picks the widest AdamW variant the running CPU supports (see adamw_kernels.hpp).
#include "adamw_kernels.hpp"

namespace llmtrain::optim::isa {

const AdamWKernel& adamw_for(CpuIsa isa) {
  static constexpr IsaVariants<AdamWKernel> kVariants{{adamw_sse2, adamw_avx2, adamw_avx512}};
  return kVariants(isa);
}

const AdamWKernel& adamw_kernel() {
  static const AdamWKernel& chosen = adamw_for(widest_cpu_isa());
  return chosen;
}

}  // namespace llmtrain::optim::isa
