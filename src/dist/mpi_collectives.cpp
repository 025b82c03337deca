// Collectives over MPI on host memory: the transport on CPU-only machines, and the reference the NCCL
// backend must agree with.
#include <mpi.h>

#include <vector>

#include "llmtrain/core/error.hpp"
#include "llmtrain/dist/collectives.hpp"
#include "llmtrain/dist/runtime.hpp"

namespace llmtrain::dist {
namespace {

// MPI counts are int; split larger buffers so 8 GiB gradient buffers still work.
constexpr std::size_t kMaxChunk = 1u << 30;

class MpiCollectives final : public Collectives {
 public:
  explicit MpiCollectives(const Runtime& runtime) : comm_(runtime.comm()), rank_(runtime.rank()), size_(runtime.size()) {}

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override { return "mpi"; }

  void all_reduce_sum(float* data, std::size_t count) override {
    for (std::size_t offset = 0; offset < count; offset += kMaxChunk) {
      const int n = static_cast<int>(std::min(kMaxChunk, count - offset));
      LLMTRAIN_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, data + offset, n, MPI_FLOAT, MPI_SUM, comm_));
    }
  }

  void all_reduce_mean(float* data, std::size_t count) override {
    all_reduce_sum(data, count);
    const float scale = 1.0f / static_cast<float>(size_);
    for (std::size_t i = 0; i < count; ++i) data[i] *= scale;
  }

  void all_gather(const float* in, float* out, std::size_t count) override {
    LLMTRAIN_CHECK(count <= kMaxChunk, "all_gather of ", count, " values per rank exceeds ", kMaxChunk);
    const int n = static_cast<int>(count);
    LLMTRAIN_MPI_CHECK(MPI_Allgather(in, n, MPI_FLOAT, out, n, MPI_FLOAT, comm_));
  }

  void reduce_scatter_sum(const float* in, float* out, std::size_t count) override {
    LLMTRAIN_CHECK(count <= kMaxChunk, "reduce_scatter of ", count, " values per rank exceeds ", kMaxChunk);
    LLMTRAIN_MPI_CHECK(MPI_Reduce_scatter_block(in, out, static_cast<int>(count), MPI_FLOAT, MPI_SUM, comm_));
  }

  void broadcast(float* data, std::size_t count, int root) override {
    for (std::size_t offset = 0; offset < count; offset += kMaxChunk) {
      const int n = static_cast<int>(std::min(kMaxChunk, count - offset));
      LLMTRAIN_MPI_CHECK(MPI_Bcast(data + offset, n, MPI_FLOAT, root, comm_));
    }
  }

  void synchronize() override {}

 private:
  MPI_Comm comm_;
  int rank_, size_;
};

}  // namespace

#ifdef LLMTRAIN_WITH_CUDA
std::unique_ptr<Collectives> make_nccl_collectives(const Runtime& runtime);  // src/dist/cuda/
bool cuda_device_visible();
#endif

std::unique_ptr<Collectives> make_collectives(const std::string& backend, const Runtime& runtime) {
#ifdef LLMTRAIN_WITH_CUDA
  if (backend == "nccl" || (backend == "auto" && cuda_device_visible())) return make_nccl_collectives(runtime);
#else
  LLMTRAIN_CHECK(backend != "nccl", "parallel.backend = \"nccl\" needs a build with LLMTRAIN_ENABLE_CUDA=ON");
#endif
  LLMTRAIN_CHECK(backend == "mpi" || backend == "auto" || backend == "nccl", "unknown collectives backend \"",
                 backend, "\" (expected auto, mpi or nccl)");
  return std::make_unique<MpiCollectives>(runtime);
}

}  // namespace llmtrain::dist
