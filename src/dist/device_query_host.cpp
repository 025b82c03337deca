// query_devices() in builds without CUDA (see device_query.hpp): no devices, whatever the machine has. A CUDA
// build compiles src/dist/cuda/device_query.cpp instead.
#include "llmtrain/dist/device_query.hpp"

#ifndef LLMTRAIN_WITH_CUDA

namespace llmtrain::dist {

DeviceQuery query_devices(const Runtime& runtime) {
  DeviceQuery out;
  out.local_rank = runtime.local_rank();
  out.local_ranks = runtime.local_size();
  out.reason = "this build has no CUDA (LLMTRAIN_ENABLE_CUDA=OFF)";
  return out;
}

}  // namespace llmtrain::dist

#endif
