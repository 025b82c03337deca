// Device memory for the GPU tests (llmtrain_gpu_test): a buffer made from a host vector and read back into
// one. Reading synchronises the device first, since the operations under test run on the non-blocking
// compute stream, which a plain cudaMemcpy does not wait for.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "cuda/cuda_check.hpp"

namespace llmtrain::testing {

template <typename T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(const std::vector<T>& host) : size_(host.size()) {
    model::cuda::check_cuda(cudaMalloc(&data_, bytes()), "cudaMalloc (test buffer)");
    model::cuda::check_cuda(cudaMemcpy(data_, host.data(), bytes(), cudaMemcpyHostToDevice), "cudaMemcpy (upload)");
  }
  ~DeviceBuffer() { cudaFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() { return data_; }
  std::vector<T> read() const {
    model::cuda::check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize (before reading a test buffer)");
    std::vector<T> host(size_);
    model::cuda::check_cuda(cudaMemcpy(host.data(), data_, bytes(), cudaMemcpyDeviceToHost), "cudaMemcpy (download)");
    return host;
  }

 private:
  std::size_t bytes() const { return size_ * sizeof(T); }
  std::size_t size_;
  T* data_ = nullptr;
};

}  // namespace llmtrain::testing
