// query_devices() in CUDA builds (see device_query.hpp): the device count, then the properties and free memory
// of the device this rank drives: its own, or the one its node-local rank picks (compiled here, never run:
// this machine has no GPU).
#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>

#include "llmtrain/core/error.hpp"
#include "llmtrain/dist/device_query.hpp"

namespace llmtrain::dist {
namespace {

void check_cuda(cudaError_t status, const char* call) {
  LLMTRAIN_CHECK(status == cudaSuccess, "CUDA call failed: ", call, ": ", cudaGetErrorString(status));
}

}  // namespace

DeviceQuery query_devices(const Runtime& runtime) {
  DeviceQuery out;
  out.cuda_build = true;
  out.local_rank = runtime.local_rank();
  out.local_ranks = runtime.local_size();
  // No driver, or no device behind CUDA_VISIBLE_DEVICES, is an answer (0 devices), not a failure.
  const cudaError_t counted = cudaGetDeviceCount(&out.device_count);
  if (counted != cudaSuccess) {
    out.device_count = 0;
    out.reason = cudaGetErrorString(counted);
    cudaGetLastError();  // the count's error is answered here, not by the next CUDA call
    return out;
  }
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  out.own_device = visible && *visible && !std::strchr(visible, ',') && out.device_count == 1;
  if (!out.own_device && out.local_rank >= out.device_count) return out;
  out.device = out.own_device ? 0 : out.local_rank;
  cudaDeviceProp properties{};
  check_cuda(cudaGetDeviceProperties(&properties, out.device), "cudaGetDeviceProperties");
  out.name = properties.name;
  out.cc_major = properties.major;
  out.cc_minor = properties.minor;
  out.sm_count = properties.multiProcessorCount;
  char bus_id[32] = {};
  check_cuda(cudaDeviceGetPCIBusId(bus_id, int(sizeof bus_id), out.device), "cudaDeviceGetPCIBusId");
  out.pci_bus_id = bus_id;
  check_cuda(cudaSetDevice(out.device), "cudaSetDevice");
  std::size_t free_bytes = 0, total_bytes = 0;
  check_cuda(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  out.free_bytes = free_bytes;
  out.total_bytes = total_bytes;
  return out;
}

}  // namespace llmtrain::dist
