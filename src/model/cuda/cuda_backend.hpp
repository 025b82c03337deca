// The CUDA backend (backend.hpp): the model's operations on the current CUDA device, float only. Defined in
// cuda_backend.cpp; built only with LLMTRAIN_ENABLE_CUDA=ON.
#pragma once

#include <memory>

#include "llmtrain/model/backend.hpp"

namespace llmtrain::model::cuda {

std::unique_ptr<Backend<float>> make_cuda_backend();

}  // namespace llmtrain::model::cuda
