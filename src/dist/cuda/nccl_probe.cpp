// The NCCL probe of CUDA builds (see nccl_probe.hpp; compiled here, never run: this machine has no GPU).
#include "llmtrain/dist/nccl_probe.hpp"

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <vector>

#include "llmtrain/core/error.hpp"
#include "llmtrain/core/timer.hpp"
#include "llmtrain/dist/collectives.hpp"

namespace llmtrain::dist {
namespace {

void check_cuda(cudaError_t status, const char* what) {
  LLMTRAIN_CHECK(status == cudaSuccess, "NCCL probe: ", what, ": ", cudaGetErrorString(status));
}

// Device memory of the probe, freed however the probe ends.
struct DeviceFloats {
  float* data = nullptr;
  explicit DeviceFloats(std::size_t count) {
    check_cuda(cudaMalloc(reinterpret_cast<void**>(&data), count * sizeof(float)), "cudaMalloc");
    check_cuda(cudaMemset(data, 0, count * sizeof(float)), "cudaMemset");
  }
  ~DeviceFloats() { cudaFree(data); }
  DeviceFloats(const DeviceFloats&) = delete;
  DeviceFloats& operator=(const DeviceFloats&) = delete;
};

}  // namespace

int nccl_version() {
  int code = 0;
  return ncclGetVersion(&code) == ncclSuccess ? code : 0;
}

AllReduceTiming time_nccl_all_reduce(const Runtime& runtime, std::size_t bytes, int iterations, double timeout_s) {
  LLMTRAIN_CHECK(iterations >= 1, "NCCL probe: iterations must be >= 1, got ", iterations);
  const std::size_t count = std::max<std::size_t>(bytes / sizeof(float), 1);
  DeviceFloats buffer(count);
  auto nccl = make_collectives("nccl", runtime, TensorPlace::device, timeout_s);
  nccl->all_reduce_sum(buffer.data, count, DType::f32).wait();  // warm-up: connections are made lazily
  std::vector<double> seconds;
  for (int i = 0; i < iterations; ++i) {
    const Stopwatch watch;
    nccl->all_reduce_sum(buffer.data, count, DType::f32).wait();
    seconds.push_back(watch.seconds());
  }
  std::sort(seconds.begin(), seconds.end());
  AllReduceTiming timing;
  timing.seconds = seconds[seconds.size() / 2];
  const double n = double(nccl->size());
  timing.bus_bytes_per_s = double(count * sizeof(float)) * 2.0 * (n - 1.0) / n / timing.seconds;
  return timing;
}

}  // namespace llmtrain::dist
