// make_collectives: the backend named in the configuration (parallel.backend).
#include "llmtrain/dist/collectives.hpp"

#include "backends.hpp"
#include "llmtrain/core/error.hpp"

namespace llmtrain::dist {

std::unique_ptr<Collectives> make_collectives(const std::string& backend, const Runtime& runtime,
                                              TensorPlace tensors, double collective_timeout_s) {
  LLMTRAIN_CHECK(backend == "mpi" || backend == "auto" || backend == "nccl", "unknown collectives backend \"",
                 backend, "\" (expected auto, mpi or nccl)");
#ifdef LLMTRAIN_WITH_CUDA
  LLMTRAIN_CHECK(backend != "nccl" || tensors == TensorPlace::device, "parallel.backend = \"nccl\" carries device "
                 "tensors only, and this run's tensors are in host memory (the model runs on the CPU): use \"auto\" "
                 "or \"mpi\"");
  LLMTRAIN_CHECK(backend != "mpi" || tensors == TensorPlace::host, "parallel.backend = \"mpi\" carries host tensors "
                 "only (this Open MPI is not CUDA-aware), and this run's tensors are in device memory: use \"auto\" "
                 "or \"nccl\"");
  if (tensors == TensorPlace::device) return make_nccl_collectives(runtime, collective_timeout_s);
#else
  LLMTRAIN_CHECK(backend != "nccl", "parallel.backend = \"nccl\" needs a build with LLMTRAIN_ENABLE_CUDA=ON");
  LLMTRAIN_CHECK(tensors == TensorPlace::host, "tensors in device memory need a build with LLMTRAIN_ENABLE_CUDA=ON");
  (void)collective_timeout_s;
#endif
  return make_mpi_collectives(runtime);
}

}  // namespace llmtrain::dist
