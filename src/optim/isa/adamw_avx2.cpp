// AdamW's update built for avx2 (flags in src/CMakeLists.txt; see adamw_kernels.hpp).
#include <cmath>
#include <cstdint>

#include "adamw_kernels.hpp"

namespace llmtrain::optim::isa {
namespace {
#define LLMTRAIN_ISA_NAME "avx2"
#include "adamw_update.inc"
}  // namespace

const AdamWKernel& adamw_avx2() { return kAdamW; }

}  // namespace llmtrain::optim::isa
