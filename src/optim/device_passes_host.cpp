// The optimizer's device passes in a build without CUDA (see device_passes.hpp): no unit lives on a device.
#include "device_passes.hpp"

#include "llmtrain/core/error.hpp"

namespace llmtrain::optim::device {

#if !defined(LLMTRAIN_WITH_CUDA)
void adamw_update(const std::vector<AdamWRange>&, const isa::AdamWCoefficients&) {
  LLMTRAIN_FAIL("AdamW on a CUDA device needs a build with LLMTRAIN_ENABLE_CUDA=ON");
}

double sum_of_squares(const std::vector<model::ParamUnit<float>>&, model::Memory&) {
  LLMTRAIN_FAIL("a gradient norm on a CUDA device needs a build with LLMTRAIN_ENABLE_CUDA=ON");
}
#endif

}  // namespace llmtrain::optim::device
