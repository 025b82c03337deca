// parallel.backend's choice (dist::collectives_backend): "auto" follows where the tensors live, MPI for host
// tensors and NCCL for device tensors in a CUDA build, whatever GPUs are visible; a backend that cannot carry
// the tensors is refused, naming the setting. No MPI or device is needed: only the choice is checked.
#include <gtest/gtest.h>

#include <string>

#include "llmtrain/core/error.hpp"
#include "llmtrain/dist/collectives.hpp"

namespace {

using llmtrain::dist::collectives_backend;
using llmtrain::dist::TensorPlace;

std::string error_of(const std::string& backend, TensorPlace tensors) {
  try {
    collectives_backend(backend, tensors);
  } catch (const llmtrain::Error& e) {
    return e.what();
  }
  return "";
}

TEST(CollectivesBackend, AutoIsMpiForHostTensors) {
  EXPECT_EQ(collectives_backend("auto", TensorPlace::host), "mpi");
  EXPECT_EQ(collectives_backend("mpi", TensorPlace::host), "mpi");
}

TEST(CollectivesBackend, UnknownNamesAreRefused) {
  EXPECT_EQ(error_of("gloo", TensorPlace::host), "unknown collectives backend \"gloo\" (expected auto, mpi or nccl)");
}

#ifdef LLMTRAIN_WITH_CUDA
TEST(CollectivesBackend, AutoIsNcclForDeviceTensors) {
  EXPECT_EQ(collectives_backend("auto", TensorPlace::device), "nccl");
  EXPECT_EQ(collectives_backend("nccl", TensorPlace::device), "nccl");
}

TEST(CollectivesBackend, ABackendThatCannotCarryTheTensorsIsRefused) {
  EXPECT_EQ(error_of("nccl", TensorPlace::host).rfind("parallel.backend = \"nccl\" carries device tensors only", 0),
            0u);
  EXPECT_EQ(error_of("mpi", TensorPlace::device).rfind("parallel.backend = \"mpi\" carries host tensors only", 0),
            0u);
}
#else
TEST(CollectivesBackend, ABuildWithoutCudaCarriesHostTensorsOnly) {
  EXPECT_EQ(error_of("nccl", TensorPlace::host),
            "parallel.backend = \"nccl\" needs a build with LLMTRAIN_ENABLE_CUDA=ON");
  EXPECT_EQ(error_of("auto", TensorPlace::device),
            "tensors in device memory need a build with LLMTRAIN_ENABLE_CUDA=ON");
}
#endif

}  // namespace
