// The backends of this build, by device (backend.hpp): the host backend always, the CUDA backend in a build
// with LLMTRAIN_ENABLE_CUDA=ON. Adding a backend is adding its folder and a case here.
#include "llmtrain/model/backend.hpp"

#include <type_traits>

#include "host_backend.hpp"
#include "llmtrain/core/error.hpp"
#if defined(LLMTRAIN_WITH_CUDA)
#include "cuda/cuda_backend.hpp"
#include "cuda/device_ops.hpp"
#endif

namespace llmtrain::model {

const char* device_name(Device device) { return device == Device::Cuda ? "cuda" : "cpu"; }

template <typename T>
std::unique_ptr<Backend<T>> make_backend(Device device) {
  if (device == Device::Cpu) return make_host_backend<T>();
  LLMTRAIN_CHECK((std::is_same_v<T, float>), "the cuda backend is float only (the double model backs the host's "
                                             "gradient checks)");
#if defined(LLMTRAIN_WITH_CUDA)
  if constexpr (std::is_same_v<T, float>) return cuda::make_cuda_backend();
#endif
  LLMTRAIN_FAIL("the cuda backend needs a build with LLMTRAIN_ENABLE_CUDA=ON; this build runs on the CPU only");
}

template std::unique_ptr<Backend<float>> make_backend<float>(Device);
template std::unique_ptr<Backend<double>> make_backend<double>(Device);

bool bf16_supported(Device device) {
  if (device == Device::Cpu) return bf16_supported();
#if defined(LLMTRAIN_WITH_CUDA)
  return cuda::bf16_supported();
#else
  return false;
#endif
}

}  // namespace llmtrain::model
