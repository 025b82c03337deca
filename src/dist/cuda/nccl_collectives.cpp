// Collectives over NCCL on CUDA device memory (GPU builds only; compiled here, never run: this machine has
// no GPU). Each communicator has its own stream, and each Request is a CUDA event recorded after the
// operation (test = cudaEventQuery, wait = cudaEventSynchronize), so callers overlap device compute on
// their own streams. Host-side agreement (agree_*) and the bootstrap go over an MPI communicator kept
// beside the NCCL one: never host memory through NCCL. Each rank drives device local_rank, one rank per device
// (dist/device_query.hpp).
#include <cuda_runtime.h>
#include <nccl.h>

#include <memory>

#include "../backends.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/dist/runtime.hpp"

#if NCCL_VERSION_CODE < NCCL_VERSION(2, 18, 0)
#error "the NCCL collectives need NCCL >= 2.18 (ncclCommSplit)"
#endif

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

ncclDataType_t nccl_type(DType type) {
  switch (type) {
    case DType::f32: return ncclFloat;
    case DType::bf16: return ncclBfloat16;
    case DType::f64: return ncclDouble;
    case DType::i64: return ncclInt64;
  }
  LLMTRAIN_FAIL("no NCCL type for DType ", int(type));
}

// One Request: an event recorded on the communicator's stream right after the operation.
class NcclPending final : public Request::Pending {
 public:
  explicit NcclPending(cudaStream_t stream) {
    LLMTRAIN_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming));
    LLMTRAIN_CUDA_CHECK(cudaEventRecord(event_, stream));
  }
  ~NcclPending() override { cudaEventDestroy(event_); }
  NcclPending(const NcclPending&) = delete;
  NcclPending& operator=(const NcclPending&) = delete;

  bool test() override {
    const cudaError_t status = cudaEventQuery(event_);
    if (status == cudaErrorNotReady) return false;
    LLMTRAIN_CUDA_CHECK(status);
    return true;
  }
  void wait() override { LLMTRAIN_CUDA_CHECK(cudaEventSynchronize(event_)); }

 private:
  cudaEvent_t event_ = nullptr;
};

class NcclCollectives final : public Collectives {
 public:
  // Takes ownership of comm; host spans the same ranks in the same order.
  NcclCollectives(ncclComm_t comm, std::unique_ptr<Collectives> host) : comm_(comm), host_(std::move(host)) {
    LLMTRAIN_NCCL_CHECK(ncclCommUserRank(comm_, &rank_));
    LLMTRAIN_NCCL_CHECK(ncclCommCount(comm_, &size_));
    LLMTRAIN_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  }
  ~NcclCollectives() override {
    ncclCommDestroy(comm_);
    cudaStreamDestroy(stream_);
  }
  NcclCollectives(const NcclCollectives&) = delete;
  NcclCollectives& operator=(const NcclCollectives&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override { return "nccl"; }

  Request all_reduce_sum(void* data, std::size_t count, DType type) override {
    LLMTRAIN_NCCL_CHECK(ncclAllReduce(data, data, count, nccl_type(type), ncclSum, comm_, stream_));
    return issued();
  }
  Request all_gather(const void* in, void* out, std::size_t count, DType type) override {
    LLMTRAIN_NCCL_CHECK(ncclAllGather(in, out, count, nccl_type(type), comm_, stream_));
    return issued();
  }
  Request reduce_scatter_sum(const void* in, void* out, std::size_t count, DType type) override {
    LLMTRAIN_NCCL_CHECK(ncclReduceScatter(in, out, count, nccl_type(type), ncclSum, comm_, stream_));
    return issued();
  }
  Request broadcast(void* data, std::size_t count, DType type, int root) override {
    LLMTRAIN_CHECK(root >= 0 && root < size_, "broadcast root ", root, " is not a member of a communicator of ",
                   size_);
    LLMTRAIN_NCCL_CHECK(ncclBroadcast(data, data, count, nccl_type(type), root, comm_, stream_));
    return issued();
  }

  std::unique_ptr<Collectives> split(int color, int key) override {
    LLMTRAIN_CHECK(color >= 0, "split color must be >= 0, got ", color);
    auto host = host_->split(color, key);
    ncclComm_t sub = nullptr;
    LLMTRAIN_NCCL_CHECK(ncclCommSplit(comm_, color, key, &sub, nullptr));
    return std::make_unique<NcclCollectives>(sub, std::move(host));
  }

  // The device moves the data by itself; what a poll can do is surface a failed communicator early.
  void progress() override {
    ncclResult_t status = ncclSuccess;
    LLMTRAIN_NCCL_CHECK(ncclCommGetAsyncError(comm_, &status));
    LLMTRAIN_CHECK(status == ncclSuccess || status == ncclInProgress, "NCCL communicator failed: ",
                   ncclGetErrorString(status));
  }

  void agree_sum(double* values, std::size_t count) override { host_->agree_sum(values, count); }
  void agree_max(double* values, std::size_t count) override { host_->agree_max(values, count); }
  void agree_sum(std::uint64_t* values, std::size_t count) override { host_->agree_sum(values, count); }

 private:
  Request issued() { return Request(std::make_unique<NcclPending>(stream_)); }

  ncclComm_t comm_ = nullptr;
  std::unique_ptr<Collectives> host_;
  int rank_ = 0, size_ = 1;
  cudaStream_t stream_ = nullptr;
};

}  // namespace

std::unique_ptr<Collectives> make_nccl_collectives(const Runtime& runtime) {
  int devices = 0;
  LLMTRAIN_CUDA_CHECK(cudaGetDeviceCount(&devices));
  LLMTRAIN_CHECK(runtime.local_rank() < devices, "parallel.backend = \"nccl\": ", runtime.hostname(), " has ",
                 runtime.local_size(), " ranks and ", devices, " visible CUDA devices; NCCL needs one device per rank");
  LLMTRAIN_CUDA_CHECK(cudaSetDevice(runtime.local_rank()));
  // The unique id travels over MPI once; after that MPI carries no tensor traffic.
  ncclUniqueId id;
  if (runtime.rank() == 0) LLMTRAIN_NCCL_CHECK(ncclGetUniqueId(&id));
  LLMTRAIN_MPI_CHECK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, runtime.comm()));
  ncclComm_t comm = nullptr;
  LLMTRAIN_NCCL_CHECK(ncclCommInitRank(&comm, runtime.size(), id, runtime.rank()));
  return std::make_unique<NcclCollectives>(comm, make_mpi_collectives(runtime));
}

}  // namespace llmtrain::dist
