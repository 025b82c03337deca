// The optimizer's device passes on the compute stream (see ../device_passes.hpp).
#include "../device_passes.hpp"

#include "../../model/cuda/compute_stream.hpp"
#include "optim_kernels.hpp"

namespace llmtrain::optim::device {

void adamw_update(const std::vector<AdamWRange>& parts, const isa::AdamWCoefficients& c) {
  cuda::adamw_update(parts, c, model::cuda::compute_stream());
}

double sum_of_squares(const std::vector<model::ParamUnit<float>>& units, model::Memory& memory) {
  std::vector<cuda::TensorRange> ranges;
  ranges.reserve(units.size());
  for (const auto& unit : units) ranges.push_back({unit.flat.data(), std::int64_t(unit.flat.size())});
  const model::Buffer<double> sum(memory, 1, "grad_norm.sum");
  cuda::squared_norm(sum.data(), ranges, model::cuda::compute_stream());
  return sum.to_host()[0];  // copy_to_host waits for the stream
}

}  // namespace llmtrain::optim::device
