// make_collectives: the backend named in the configuration (parallel.backend), chosen for where the tensors live.
#include "llmtrain/dist/collectives.hpp"

#include "backends.hpp"
#include "llmtrain/core/error.hpp"

namespace llmtrain::dist {

std::string collectives_backend(const std::string& backend, TensorPlace tensors) {
  LLMTRAIN_CHECK(backend == "mpi" || backend == "auto" || backend == "nccl", "unknown collectives backend \"",
                 backend, "\" (expected auto, mpi or nccl)");
#ifdef LLMTRAIN_WITH_CUDA
  LLMTRAIN_CHECK(backend != "nccl" || tensors == TensorPlace::device, "parallel.backend = \"nccl\" carries device "
                 "tensors only, and this run's tensors are in host memory (train.device resolved to cpu): use \"auto\" "
                 "or \"mpi\"");
  LLMTRAIN_CHECK(backend != "mpi" || tensors == TensorPlace::host, "parallel.backend = \"mpi\" carries host tensors "
                 "only (this Open MPI is not CUDA-aware), and this run's tensors are in device memory: use \"auto\" "
                 "or \"nccl\"");
  return tensors == TensorPlace::device ? "nccl" : "mpi";
#else
  LLMTRAIN_CHECK(backend != "nccl", "parallel.backend = \"nccl\" needs a build with LLMTRAIN_ENABLE_CUDA=ON");
  LLMTRAIN_CHECK(tensors == TensorPlace::host, "tensors in device memory need a build with LLMTRAIN_ENABLE_CUDA=ON");
  return "mpi";
#endif
}

std::unique_ptr<Collectives> make_collectives(const std::string& backend, const Runtime& runtime,
                                              TensorPlace tensors, double collective_timeout_s) {
  const std::string chosen = collectives_backend(backend, tensors);
#ifdef LLMTRAIN_WITH_CUDA
  if (chosen == "nccl") return make_nccl_collectives(runtime, collective_timeout_s);
#else
  (void)collective_timeout_s;
#endif
  return make_mpi_collectives(runtime);
}

}  // namespace llmtrain::dist
