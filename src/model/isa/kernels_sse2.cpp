// The host float element-wise kernels built for sse2 (flags in src/CMakeLists.txt; see kernels.hpp).
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels.hpp"

namespace llmtrain::model::isa {
namespace {
#define LLMTRAIN_ISA_NAME "sse2"
#include "elementwise.inc"
}  // namespace

const ElementwiseKernels& kernels_sse2() { return kTable; }

}  // namespace llmtrain::model::isa
