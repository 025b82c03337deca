// What the GPU preflight asks of NCCL (src/job/gpu_check.cpp): the library version actually loaded, and a
// small all-reduce across the job with its bus bandwidth, so that a wrong network or a slow link shows in
// seconds rather than as a slow first step. CUDA builds only; a build without CUDA answers "" and refuses the
// all-reduce (src/dist/nccl_probe_host.cpp).
#pragma once

#include <cstddef>
#include <string>

#include "llmtrain/dist/runtime.hpp"

namespace llmtrain::dist {

// The NCCL library loaded at run time (not the one built against), as ncclGetVersion codes it: major * 10000 +
// minor * 100 + patch (22809 is 2.28.9); 0 without CUDA.
int nccl_version();

struct AllReduceTiming {
  double seconds = 0;             // median of the timed all-reduces
  double bus_bytes_per_s = 0;     // bytes * 2 (n - 1) / n / seconds, nccl-tests' "busbw"
};

// Collective over every rank, each on its current device: `bytes` of fp32 summed `iterations` times after one
// warm-up, on an NCCL communicator of its own (timeout_s as parallel.collective_timeout_s).
AllReduceTiming time_nccl_all_reduce(const Runtime& runtime, std::size_t bytes, int iterations, double timeout_s);

}  // namespace llmtrain::dist
