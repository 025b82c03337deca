// main() of the device tests (llmtrain_gpu_test): runs the GoogleTest cases where this process sees a CUDA
// device, else says why and exits 77, which ctest reports as skipped rather than passed.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdio>

int main(int argc, char** argv) {
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess || devices == 0) {
    std::printf("SKIPPED: no CUDA device is visible (cudaGetDeviceCount: %s, %d devices)\n",
                status == cudaSuccess ? "success" : cudaGetErrorString(status), devices);
    return 77;
  }
  cudaDeviceProp properties{};
  if (cudaGetDeviceProperties(&properties, 0) == cudaSuccess)
    std::printf("device 0: %s, compute capability %d.%d\n", properties.name, properties.major, properties.minor);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
