// The host float element-wise kernels built for avx2 (flags in src/CMakeLists.txt; see kernels.hpp).
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels.hpp"

namespace llmtrain::model::isa {
namespace {
#define LLMTRAIN_ISA_NAME "avx2"
#include "elementwise.inc"
}  // namespace

const ElementwiseKernels& kernels_avx2() { return kTable; }

}  // namespace llmtrain::model::isa
