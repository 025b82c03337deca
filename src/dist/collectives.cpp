// make_collectives: the backend named in the configuration (parallel.backend).
#include "llmtrain/dist/collectives.hpp"

#include "backends.hpp"
#include "llmtrain/core/error.hpp"

namespace llmtrain::dist {

std::unique_ptr<Collectives> make_collectives(const std::string& backend, const Runtime& runtime) {
  LLMTRAIN_CHECK(backend == "mpi" || backend == "auto" || backend == "nccl", "unknown collectives backend \"",
                 backend, "\" (expected auto, mpi or nccl)");
#ifdef LLMTRAIN_WITH_CUDA
  if (backend == "nccl" || (backend == "auto" && cuda_device_visible())) return make_nccl_collectives(runtime);
#else
  LLMTRAIN_CHECK(backend != "nccl", "parallel.backend = \"nccl\" needs a build with LLMTRAIN_ENABLE_CUDA=ON");
#endif
  return make_mpi_collectives(runtime);
}

}  // namespace llmtrain::dist
