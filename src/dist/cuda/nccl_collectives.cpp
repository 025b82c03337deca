// Collectives over NCCL on CUDA device memory (GPU builds only; compiled in CI here, never run: this
// machine has no GPU). The NCCL unique id travels over MPI at start-up; after that MPI carries no tensor
// traffic, because NCCL and MPI operations in flight together on the same devices can deadlock.
// Each rank drives the device local_rank % device_count on its own stream; synchronize() waits for it.
#include <cuda_runtime.h>
#include <nccl.h>

#include <memory>

#include "llmtrain/core/error.hpp"
#include "llmtrain/dist/collectives.hpp"
#include "llmtrain/dist/runtime.hpp"

#define LLMTRAIN_CUDA_CHECK(call)                                                                   \
  do {                                                                                              \
    const cudaError_t status_ = (call);                                                             \
    LLMTRAIN_CHECK(status_ == cudaSuccess, "CUDA call failed: ", #call, ": ", cudaGetErrorString(status_)); \
  } while (0)
#define LLMTRAIN_NCCL_CHECK(call)                                                                   \
  do {                                                                                              \
    const ncclResult_t status_ = (call);                                                            \
    LLMTRAIN_CHECK(status_ == ncclSuccess, "NCCL call failed: ", #call, ": ", ncclGetErrorString(status_)); \
  } while (0)

namespace llmtrain::dist {
namespace {

class NcclCollectives final : public Collectives {
 public:
  explicit NcclCollectives(const Runtime& runtime) : rank_(runtime.rank()), size_(runtime.size()) {
    int devices = 0;
    LLMTRAIN_CUDA_CHECK(cudaGetDeviceCount(&devices));
    LLMTRAIN_CHECK(devices > 0, "parallel.backend = \"nccl\" but no CUDA device is visible on ", runtime.hostname());
    LLMTRAIN_CUDA_CHECK(cudaSetDevice(runtime.local_rank() % devices));
    LLMTRAIN_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    ncclUniqueId id;
    if (rank_ == 0) LLMTRAIN_NCCL_CHECK(ncclGetUniqueId(&id));
    LLMTRAIN_MPI_CHECK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, runtime.comm()));
    LLMTRAIN_NCCL_CHECK(ncclCommInitRank(&comm_, size_, id, rank_));
  }
  ~NcclCollectives() override {
    ncclCommDestroy(comm_);
    cudaStreamDestroy(stream_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override { return "nccl"; }

  void all_reduce_sum(float* data, std::size_t count) override {
    LLMTRAIN_NCCL_CHECK(ncclAllReduce(data, data, count, ncclFloat, ncclSum, comm_, stream_));
  }
  void all_reduce_mean(float* data, std::size_t count) override {
    LLMTRAIN_NCCL_CHECK(ncclAllReduce(data, data, count, ncclFloat, ncclAvg, comm_, stream_));
  }
  void all_gather(const float* in, float* out, std::size_t count) override {
    LLMTRAIN_NCCL_CHECK(ncclAllGather(in, out, count, ncclFloat, comm_, stream_));
  }
  void reduce_scatter_sum(const float* in, float* out, std::size_t count) override {
    LLMTRAIN_NCCL_CHECK(ncclReduceScatter(in, out, count, ncclFloat, ncclSum, comm_, stream_));
  }
  void broadcast(float* data, std::size_t count, int root) override {
    LLMTRAIN_NCCL_CHECK(ncclBroadcast(data, data, count, ncclFloat, root, comm_, stream_));
  }
  void synchronize() override { LLMTRAIN_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  int rank_, size_;
  cudaStream_t stream_ = nullptr;
  ncclComm_t comm_ = nullptr;
};

}  // namespace

bool cuda_device_visible() {
  int devices = 0;
  return cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
}

std::unique_ptr<Collectives> make_nccl_collectives(const Runtime& runtime) {
  return std::make_unique<NcclCollectives>(runtime);
}

}  // namespace llmtrain::dist
