// The clipping factor and the local sum of squares behind the norm (see grad_clip.hpp).
#include "llmtrain/optim/grad_clip.hpp"

#include "device_passes.hpp"

namespace llmtrain::optim {

double clip_factor(double norm, double max_norm) {
  return max_norm > 0 && norm > max_norm ? max_norm / (norm + 1e-6) : 1.0;
}

double sum_of_squares(const std::vector<model::ParamUnit<float>>& units, model::Backend<float>* device) {
  if (device && device->device() == model::Device::Cuda) return optim::device::sum_of_squares(units, *device);
  return model::sum_of_squares(units);
}

}  // namespace llmtrain::optim
