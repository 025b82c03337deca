// The one compute stream of a process's device work: the kernels, cuBLAS and the stores all enqueue on it,
// and order themselves against other streams (a copy stream, a communication stream) with events, never
// with device-wide synchronisation.
#pragma once

#include <cuda_runtime_api.h>

namespace llmtrain::model::cuda {

// Created on first use on the current device (cudaStreamNonBlocking); lives until the process ends.
cudaStream_t compute_stream();

}  // namespace llmtrain::model::cuda
