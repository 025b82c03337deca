// Collectives over MPI on host memory: the transport on CPU-only machines, and the reference the NCCL
// backend must agree with. Each object owns a communicator of its own (a duplicate of world, or a split),
// so its operations never match another component's, and keeps a registry of its live requests: MPI over
// TCP moves data only inside MPI calls, and progress() is the call that moves it while the caller computes.
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

#include "backends.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/dist/runtime.hpp"
#include "mpi_datatypes.hpp"

namespace llmtrain::dist {
namespace {

using Registry = std::vector<Request::Pending*>;

// Calls issue(offset, n) for consecutive pieces of at most max_chunk of `count` elements (MPI counts are int).
template <typename Issue>
void for_chunks(std::size_t count, std::size_t max_chunk, Issue issue) {
  for (std::size_t offset = 0; offset < count; offset += max_chunk)
    issue(offset, int(std::min(max_chunk, count - offset)));
}

// A live request of a communicator, listed in its registry so that progress() can drive it.
class Registered : public Request::Pending {
 public:
  explicit Registered(std::shared_ptr<Registry> registry) : registry_(std::move(registry)) {
    registry_->push_back(this);
  }
  ~Registered() override { registry_->erase(std::find(registry_->begin(), registry_->end(), this)); }
  Registered(const Registered&) = delete;
  Registered& operator=(const Registered&) = delete;

 private:
  std::shared_ptr<Registry> registry_;
};

// One Request: the MPI requests of all chunks of one operation.
class MpiPending final : public Registered {
 public:
  using Registered::Registered;
  MPI_Request* add() { return &requests_.emplace_back(MPI_REQUEST_NULL); }

  bool test() override {
    int done = 1;
    LLMTRAIN_MPI_CHECK(MPI_Testall(int(requests_.size()), requests_.data(), &done, MPI_STATUSES_IGNORE));
    return done != 0;
  }
  void wait() override {
    LLMTRAIN_MPI_CHECK(MPI_Waitall(int(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE));
  }

 private:
  std::vector<MPI_Request> requests_;  // completed ones become MPI_REQUEST_NULL
};

// Reduce-scatter as a ring of point-to-point steps. Open MPI's non-blocking reduce-scatter (libnbc) reduces
// onto one member and scatters from it: at two members one of them sends the whole buffer and then waits
// for its block back, three times the time of the bandwidth-optimal exchange on a shaped link (measured,
// perf/RESULTS.md). In the ring each member sends and receives (S - 1) blocks: at step s it passes the
// partial sum of block (rank - s - 1) to the next member and receives that of block (rank - s - 2) from the
// previous one, adds its own values of that block (MPI_Reduce_local with the backend's sum, so bf16 sums
// in fp32 and rounds once per hop), and passes it on; after S - 1 steps it holds its own block's sum. The
// order of the additions depends only on S, so results are reproducible. Each step runs when test() or
// wait() sees the previous one complete.
class RingReduceScatter final : public Registered {
 public:
  RingReduceScatter(std::shared_ptr<Registry> registry, const void* in, void* out, std::size_t count,
                    MPI_Datatype datatype, MPI_Op sum, std::size_t width, MPI_Comm comm, int rank, int size,
                    int tag, std::size_t max_chunk)
      : Registered(std::move(registry)), in_(static_cast<const char*>(in)), out_(static_cast<char*>(out)),
        count_(count), datatype_(datatype), sum_(sum), width_(width), comm_(comm), rank_(rank), size_(size),
        tag_(tag), max_chunk_(max_chunk) {
    if (size_ > 2)
      for (auto& partial : partial_) partial.resize(count * width);
    post();
  }

  bool test() override {
    while (step_ < size_ - 1) {
      int done = 1;
      LLMTRAIN_MPI_CHECK(MPI_Testall(int(requests_.size()), requests_.data(), &done, MPI_STATUSES_IGNORE));
      if (!done) return false;
      next();
    }
    return true;
  }
  void wait() override {
    while (step_ < size_ - 1) {
      LLMTRAIN_MPI_CHECK(MPI_Waitall(int(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE));
      next();
    }
  }

 private:
  const char* block(int b) const { return in_ + std::size_t((b % size_ + size_) % size_) * count_ * width_; }
  // The last step receives into out directly.
  char* landing() { return step_ == size_ - 2 ? out_ : partial_[step_ % 2].data(); }
  const char* sending() const { return step_ == 0 ? block(rank_ - 1) : partial_[(step_ + 1) % 2].data(); }

  void post() {
    requests_.clear();
    if (size_ == 1) {
      if (count_ > 0) std::memcpy(out_, in_, count_ * width_);
      return;
    }
    const int next = (rank_ + 1) % size_, previous = (rank_ + size_ - 1) % size_;
    char* into = landing();
    const char* from = sending();
    for_chunks(count_, max_chunk_, [&](std::size_t offset, int n) {
      LLMTRAIN_MPI_CHECK(MPI_Irecv(into + offset * width_, n, datatype_, previous, tag_, comm_,
                                   &requests_.emplace_back(MPI_REQUEST_NULL)));
      LLMTRAIN_MPI_CHECK(MPI_Isend(from + offset * width_, n, datatype_, next, tag_, comm_,
                                   &requests_.emplace_back(MPI_REQUEST_NULL)));
    });
  }

  // The step's block arrived: add this member's values of it, then start the next step.
  void next() {
    char* into = landing();
    const char* mine = block(rank_ - step_ - 2);
    for_chunks(count_, max_chunk_, [&](std::size_t offset, int n) {
      LLMTRAIN_MPI_CHECK(MPI_Reduce_local(mine + offset * width_, into + offset * width_, n, datatype_, sum_));
    });
    if (++step_ < size_ - 1) post();
  }

  const char* in_;
  char* out_;
  std::size_t count_;
  MPI_Datatype datatype_;
  MPI_Op sum_;
  std::size_t width_;
  MPI_Comm comm_;
  int rank_, size_, tag_;
  std::size_t max_chunk_;
  std::vector<char> partial_[2];  // a step receives into one while the other (the last step's sum) is sent (S > 2)
  std::vector<MPI_Request> requests_;
  int step_ = 0;
};

class MpiCollectives final : public Collectives {
 public:
  // Takes ownership of comm.
  MpiCollectives(MPI_Comm comm, std::shared_ptr<const MpiDatatypes> types, std::size_t max_chunk)
      : comm_(comm), types_(std::move(types)), max_chunk_(max_chunk) {
    LLMTRAIN_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
    int* tag_ub = nullptr;
    int found = 0;
    LLMTRAIN_MPI_CHECK(MPI_Comm_get_attr(comm_, MPI_TAG_UB, &tag_ub, &found));
    tag_limit_ = found && tag_ub ? *tag_ub : 32767;  // the standard guarantees at least 32767
    LLMTRAIN_MPI_CHECK(MPI_Comm_size(comm_, &size_));
  }
  // Operations still in flight complete normally: MPI frees the communicator after them.
  ~MpiCollectives() override { MPI_Comm_free(&comm_); }
  MpiCollectives(const MpiCollectives&) = delete;
  MpiCollectives& operator=(const MpiCollectives&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override { return "mpi"; }

  Request all_reduce_sum(void* data, std::size_t count, DType type) override {
    auto pending = start();
    char* bytes = static_cast<char*>(data);
    const std::size_t width = dtype_size(type);
    for_chunks(count, [&](std::size_t offset, int n) {
      LLMTRAIN_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, bytes + offset * width, n, types_->datatype(type),
                                        types_->sum(type), comm_, pending->add()));
    });
    return Request(std::move(pending));
  }

  Request all_gather(const void* in, void* out, std::size_t count, DType type) override {
    auto pending = start();
    const MPI_Datatype datatype = types_->datatype(type);
    if (count * std::size_t(size_) <= max_chunk_) {
      if (count > 0)
        LLMTRAIN_MPI_CHECK(MPI_Iallgather(in, int(count), datatype, out, int(count), datatype, comm_, pending->add()));
      return Request(std::move(pending));
    }
    // Too large for int counts: each member broadcasts its block in chunks, straight into place.
    const std::size_t width = dtype_size(type);
    char* bytes = static_cast<char*>(out);
    std::memmove(bytes + std::size_t(rank_) * count * width, in, count * width);
    for (int root = 0; root < size_; ++root)
      for_chunks(count, [&](std::size_t offset, int n) {
        char* block = bytes + (std::size_t(root) * count + offset) * width;
        LLMTRAIN_MPI_CHECK(MPI_Ibcast(block, n, datatype, root, comm_, pending->add()));
      });
    return Request(std::move(pending));
  }

  Request reduce_scatter_sum(const void* in, void* out, std::size_t count, DType type) override {
    // Each reduce-scatter's messages carry a tag of their own, so that two in flight never match each other's
    // (every member numbers them alike: collectives are called in the same order on all members).
    const int tag = int(reduce_scatters_++ % std::uint64_t(tag_limit_));
    return Request(std::make_unique<RingReduceScatter>(registry_, in, out, count, types_->datatype(type),
                                                       types_->sum(type), dtype_size(type), comm_, rank_, size_,
                                                       tag, max_chunk_));
  }

  Request broadcast(void* data, std::size_t count, DType type, int root) override {
    LLMTRAIN_CHECK(root >= 0 && root < size_, "broadcast root ", root, " is not a member of a communicator of ",
                   size_);
    auto pending = start();
    char* bytes = static_cast<char*>(data);
    const std::size_t width = dtype_size(type);
    for_chunks(count, [&](std::size_t offset, int n) {
      LLMTRAIN_MPI_CHECK(MPI_Ibcast(bytes + offset * width, n, types_->datatype(type), root, comm_, pending->add()));
    });
    return Request(std::move(pending));
  }

  std::unique_ptr<Collectives> split(int color, int key) override {
    LLMTRAIN_CHECK(color >= 0, "split color must be >= 0, got ", color);
    MPI_Comm sub = MPI_COMM_NULL;
    LLMTRAIN_MPI_CHECK(MPI_Comm_split(comm_, color, key, &sub));
    return std::make_unique<MpiCollectives>(sub, types_, max_chunk_);
  }

  void progress() override {
    for (Request::Pending* pending : *registry_) pending->test();
  }

  void agree_sum(double* values, std::size_t count) override { agree(values, count, MPI_DOUBLE, MPI_SUM); }
  void agree_max(double* values, std::size_t count) override { agree(values, count, MPI_DOUBLE, MPI_MAX); }
  void agree_sum(std::uint64_t* values, std::size_t count) override { agree(values, count, MPI_UINT64_T, MPI_SUM); }

 private:
  std::unique_ptr<MpiPending> start() { return std::make_unique<MpiPending>(registry_); }

  template <typename Issue>
  void for_chunks(std::size_t count, Issue issue) const {
    dist::for_chunks(count, max_chunk_, issue);
  }

  void agree(void* values, std::size_t count, MPI_Datatype datatype, MPI_Op op) {
    LLMTRAIN_CHECK(count <= std::size_t(INT_MAX), "agreement on ", count, " values: meant for a few scalars");
    if (count > 0) LLMTRAIN_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, values, int(count), datatype, op, comm_));
  }

  MPI_Comm comm_;
  std::shared_ptr<const MpiDatatypes> types_;
  std::size_t max_chunk_;
  int rank_ = 0, size_ = 1;
  int tag_limit_ = 32767;
  std::uint64_t reduce_scatters_ = 0;
  std::shared_ptr<Registry> registry_ = std::make_shared<Registry>();
};

}  // namespace

std::unique_ptr<Collectives> make_mpi_collectives(const Runtime& runtime, std::size_t max_chunk) {
  LLMTRAIN_CHECK(max_chunk > 0 && max_chunk <= std::size_t(INT_MAX), "MPI chunk size ", max_chunk,
                 " is outside [1, INT_MAX]");
  MPI_Comm comm = MPI_COMM_NULL;
  LLMTRAIN_MPI_CHECK(MPI_Comm_dup(runtime.comm(), &comm));
  return std::make_unique<MpiCollectives>(comm, std::make_shared<const MpiDatatypes>(), max_chunk);
}

}  // namespace llmtrain::dist
