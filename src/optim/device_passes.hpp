// The optimizer's passes over unit buffers in a CUDA device's memory (units_in_memory.hpp), on the process's
// compute stream: the glue between AdamW / the global norm and the device launchers (cuda/optim_kernels.hpp).
// Defined in cuda/device_passes.cpp in a build with CUDA; in one without, device_passes_host.cpp throws
// llmtrain::Error (no unit ever lives on a device there).
#pragma once

#include <cstdint>
#include <vector>

#include "adamw_range.hpp"
#include "isa/adamw_kernels.hpp"
#include "llmtrain/model/buffer.hpp"
#include "llmtrain/model/param_units.hpp"

namespace llmtrain::optim::device {

// One AdamW step over every part in one launch (optim::cuda::adamw_update): decayed parts with c, the others
// with c.keep = 1.
void adamw_update(const std::vector<AdamWRange>& parts, const isa::AdamWCoefficients& c);

// The sum of the squares of every element of `units` (device buffers), in double, read back to the host once the
// compute stream has produced it; `memory` holds the device scalar.
double sum_of_squares(const std::vector<model::ParamUnit<float>>& units, model::Memory& memory);

}  // namespace llmtrain::optim::device
