// Collectives over NCCL on CUDA device memory (GPU builds only; compiled here, never run: this machine has
// no GPU). Each communicator has its own stream, and each Request is a CUDA event recorded after the
// operation, so callers overlap device compute on their own streams. Host-side agreement (agree_*) and the
// bootstrap go over an MPI communicator kept beside the NCCL one: never host memory through NCCL. The
// communicator lives on the device the job selected (cudaSetDevice before make_collectives).
//
// Failure: a host that waits polls the event and ncclCommGetAsyncError; an operation that has not completed
// parallel.collective_timeout_s after the wait began (a peer died or hangs) aborts the communicator
// (ncclCommAbort, which ends its kernels) and throws, naming rank, operation and NCCL's message. That rank's
// error then takes the job's error path (spmd_main.hpp: MPI_Abort), so the job ends within seconds of the
// timeout rather than hanging.
#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "../backends.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/dist/runtime.hpp"

#if NCCL_VERSION_CODE < NCCL_VERSION(2, 18, 0)
#error "the NCCL collectives need NCCL >= 2.18 (ncclCommSplit)"
#endif

namespace llmtrain::dist {
namespace {

// One NCCL communicator as its collectives and their requests share it: a request may outlive the object
// that issued it, and an aborted communicator must be neither used nor destroyed again.
struct CommState {
  ncclComm_t comm = nullptr;
  int rank = 0;            // in this communicator
  double timeout_s = 0;    // parallel.collective_timeout_s; 0: wait without limit
  bool aborted = false;
  ~CommState() {
    if (comm && !aborted) ncclCommDestroy(comm);
  }
};

void check_cuda(cudaError_t status, const CommState& state, const char* what) {
  LLMTRAIN_CHECK(status == cudaSuccess, "rank ", state.rank, ": ", what, ": CUDA error: ", cudaGetErrorString(status));
}
void check_nccl(ncclResult_t status, const CommState& state, const std::string& what) {
  LLMTRAIN_CHECK(status == ncclSuccess || status == ncclInProgress, "rank ", state.rank, ": NCCL ", what, " failed: ",
                 ncclGetErrorString(status), " (", ncclGetLastError(state.comm), ")");
}

// A communicator that failed asynchronously (a peer's connection broke, a remote error) reports it here.
void check_async_error(const CommState& state, const std::string& what) {
  ncclResult_t status = ncclSuccess;
  check_nccl(ncclCommGetAsyncError(state.comm, &status), state, "ncclCommGetAsyncError");
  check_nccl(status, state, what);
}

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
  NcclPending(std::shared_ptr<CommState> state, cudaStream_t stream, std::string what)
      : state_(std::move(state)), what_(std::move(what)) {
    check_cuda(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), *state_, "cudaEventCreateWithFlags");
    check_cuda(cudaEventRecord(event_, stream), *state_, "cudaEventRecord");
  }
  ~NcclPending() override { cudaEventDestroy(event_); }
  NcclPending(const NcclPending&) = delete;
  NcclPending& operator=(const NcclPending&) = delete;

  bool test() override {
    LLMTRAIN_CHECK(!state_->aborted, "rank ", state_->rank, ": NCCL ", what_, ": its communicator was aborted");
    const cudaError_t status = cudaEventQuery(event_);
    if (status == cudaErrorNotReady) {
      check_async_error(*state_, what_);
      return false;
    }
    check_cuda(status, *state_, what_.c_str());
    return true;
  }

  // Polls rather than cudaEventSynchronize: a wait that never returns could not notice a dead peer.
  void wait() override {
    const auto start = std::chrono::steady_clock::now();
    while (!test()) {
      const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (state_->timeout_s > 0 && waited > state_->timeout_s) {
        state_->aborted = true;
        ncclCommAbort(state_->comm);
        LLMTRAIN_FAIL("rank ", state_->rank, ": NCCL ", what_, " did not complete within ", state_->timeout_s,
                      " s (parallel.collective_timeout_s): a peer failed or hangs; communicator aborted");
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

 private:
  std::shared_ptr<CommState> state_;
  std::string what_;
  cudaEvent_t event_ = nullptr;
};

class NcclCollectives final : public Collectives {
 public:
  // Takes ownership of comm; host spans the same ranks in the same order.
  NcclCollectives(ncclComm_t comm, double timeout_s, std::unique_ptr<Collectives> host)
      : state_(std::make_shared<CommState>()), host_(std::move(host)) {
    state_->comm = comm;
    state_->timeout_s = timeout_s;
    state_->rank = host_->rank();
    check_nccl(ncclCommUserRank(comm, &rank_), *state_, "ncclCommUserRank");
    check_nccl(ncclCommCount(comm, &size_), *state_, "ncclCommCount");
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), *state_, "cudaStreamCreateWithFlags");
  }
  ~NcclCollectives() override { cudaStreamDestroy(stream_); }
  NcclCollectives(const NcclCollectives&) = delete;
  NcclCollectives& operator=(const NcclCollectives&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override { return "nccl"; }

  Request all_reduce_sum(void* data, std::size_t count, DType type) override {
    const std::string what = describe("all-reduce", count, type);
    check_usable(what);
    check_nccl(ncclAllReduce(data, data, count, nccl_type(type), ncclSum, state_->comm, stream_), *state_, what);
    return issued(what);
  }
  Request all_gather(const void* in, void* out, std::size_t count, DType type) override {
    const std::string what = describe("all-gather", count, type);
    check_usable(what);
    check_nccl(ncclAllGather(in, out, count, nccl_type(type), state_->comm, stream_), *state_, what);
    return issued(what);
  }
  Request reduce_scatter_sum(const void* in, void* out, std::size_t count, DType type) override {
    const std::string what = describe("reduce-scatter", count, type);
    check_usable(what);
    check_nccl(ncclReduceScatter(in, out, count, nccl_type(type), ncclSum, state_->comm, stream_), *state_, what);
    return issued(what);
  }
  Request broadcast(void* data, std::size_t count, DType type, int root) override {
    LLMTRAIN_CHECK(root >= 0 && root < size_, "broadcast root ", root, " is not a member of a communicator of ",
                   size_);
    const std::string what = describe("broadcast", count, type);
    check_usable(what);
    check_nccl(ncclBroadcast(data, data, count, nccl_type(type), root, state_->comm, stream_), *state_, what);
    return issued(what);
  }

  std::unique_ptr<Collectives> split(int color, int key) override {
    LLMTRAIN_CHECK(color >= 0, "split color must be >= 0, got ", color);
    check_usable("ncclCommSplit");
    auto host = host_->split(color, key);
    ncclComm_t sub = nullptr;
    check_nccl(ncclCommSplit(state_->comm, color, key, &sub, nullptr), *state_, "ncclCommSplit");
    return std::make_unique<NcclCollectives>(sub, state_->timeout_s, std::move(host));
  }

  // The device moves the data by itself; what a poll can do is surface a failed communicator early.
  void progress() override {
    check_usable("progress");
    check_async_error(*state_, "communicator");
  }

  void agree_sum(double* values, std::size_t count) override { host_->agree_sum(values, count); }
  void agree_max(double* values, std::size_t count) override { host_->agree_max(values, count); }
  void agree_sum(std::uint64_t* values, std::size_t count) override { host_->agree_sum(values, count); }

 private:
  Request issued(const std::string& what) { return Request(std::make_unique<NcclPending>(state_, stream_, what)); }
  void check_usable(const std::string& what) const {
    LLMTRAIN_CHECK(!state_->aborted, "rank ", state_->rank, ": NCCL ", what, ": the communicator was aborted after "
                   "an earlier failure");
  }
  static std::string describe(const char* operation, std::size_t count, DType type) {
    return std::string(operation) + " of " + std::to_string(count) + " " + dtype_name(type) + " elements";
  }

  std::shared_ptr<CommState> state_;
  std::unique_ptr<Collectives> host_;
  int rank_ = 0, size_ = 1;
  cudaStream_t stream_ = nullptr;
};

}  // namespace

std::unique_ptr<Collectives> make_nccl_collectives(const Runtime& runtime, double collective_timeout_s) {
  CommState bootstrap;  // names this rank in the errors before a communicator exists
  bootstrap.rank = runtime.rank();
  int device = -1;
  check_cuda(cudaGetDevice(&device), bootstrap, "cudaGetDevice (the job selects the device first)");
  // The unique id travels over MPI once; after that MPI carries no tensor traffic.
  ncclUniqueId id;
  if (runtime.rank() == 0) check_nccl(ncclGetUniqueId(&id), bootstrap, "ncclGetUniqueId");
  LLMTRAIN_MPI_CHECK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, runtime.comm()));
  ncclComm_t comm = nullptr;
  check_nccl(ncclCommInitRank(&comm, runtime.size(), id, runtime.rank()), bootstrap,
             "ncclCommInitRank on device " + std::to_string(device));
  return std::make_unique<NcclCollectives>(comm, collective_timeout_s, make_mpi_collectives(runtime));
}

}  // namespace llmtrain::dist
