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

// Reduce-scatter and all-reduce as rings of point-to-point steps. Open MPI's non-blocking collectives
// (libnbc) reduce onto one member and then scatter or broadcast from it: at two members one of them sends
// the whole buffer and then waits for the result back, so the two directions of the link take turns
// (measured, docs/collectives.md). In a ring every member sends to the next and receives from the previous
// one at each step, so both directions carry data at once.
//
// A step sends `send_n` elements to the next member and receives `recv_n` from the previous one; once both
// are done, if it has an addend, sum += addend over the received block (MPI_Reduce_local with the backend's
// sum, so bf16 sums in fp32 and rounds once per hop). The plans below fix which blocks move at each step;
// the order of the additions depends only on the group size, so results are reproducible and equal on all
// members. Each step is posted when test() or wait() sees the previous one complete.
struct RingStep {
  const char* send;
  std::size_t send_n;
  char* recv;
  std::size_t recv_n;
  const char* addend;  // null: the step only moves data
  char* sum;
};

// The steps of one ring operation and the scratch they receive into (moving the vectors keeps the pointers).
struct RingPlan {
  std::vector<RingStep> steps;
  std::vector<std::vector<char>> scratch;
};

// Reduce-scatter of S blocks of `count` (S > 1): at step s a member passes the partial sum of block
// (rank - s - 1) on and receives that of block (rank - s - 2), to which it adds its own values; after S - 1
// steps it holds its own block's sum. Block b's sum starts at member b + 1 and ends at member b.
RingPlan reduce_scatter_plan(const char* in, char* out, std::size_t count, std::size_t width, int rank, int size) {
  RingPlan plan;
  auto block = [&](int b) { return in + std::size_t((b % size + size) % size) * count * width; };
  if (size > 2) plan.scratch.assign(2, std::vector<char>(count * width));  // receive into one, send the other
  for (int s = 0; s < size - 1; ++s) {
    char* landing = s == size - 2 ? out : plan.scratch[std::size_t(s % 2)].data();
    const char* sending = s == 0 ? block(rank - 1) : plan.scratch[std::size_t((s + 1) % 2)].data();
    plan.steps.push_back({sending, count, landing, count, block(rank - s - 2), landing});
  }
  return plan;
}

// In-place all-reduce of `count` >= S elements (S > 1): the buffer split into S blocks (the first count % S
// one element longer), a reduce-scatter on them as above (received partial sums added into the buffer),
// then S - 1 steps that pass each member's summed block around the ring, straight into place. Each member
// sends and receives 2 (S - 1) / S of the buffer.
RingPlan all_reduce_plan(char* data, std::size_t count, std::size_t width, int rank, int size) {
  RingPlan plan;
  const std::size_t base = count / std::size_t(size), longer = count % std::size_t(size);
  auto index = [&](int b) { return std::size_t((b % size + size) % size); };
  auto block = [&](int b) { return data + (index(b) * base + std::min(index(b), longer)) * width; };
  auto length = [&](int b) { return base + (index(b) < longer ? 1 : 0); };
  plan.scratch.emplace_back((base + 1) * width);
  char* partial = plan.scratch[0].data();
  for (int s = 0; s < size - 1; ++s)
    plan.steps.push_back({block(rank - s - 1), length(rank - s - 1), partial, length(rank - s - 2), partial,
                          block(rank - s - 2)});
  for (int s = 0; s < size - 1; ++s)
    plan.steps.push_back({block(rank - s), length(rank - s), block(rank - s - 1), length(rank - s - 1), nullptr,
                          nullptr});
  return plan;
}

class Ring final : public Registered {
 public:
  Ring(std::shared_ptr<Registry> registry, RingPlan plan, MPI_Datatype datatype, MPI_Op sum, std::size_t width,
       MPI_Comm comm, int rank, int size, int tag, std::size_t max_chunk)
      : Registered(std::move(registry)), plan_(std::move(plan)), datatype_(datatype), sum_(sum), width_(width),
        comm_(comm), next_((rank + 1) % size), previous_((rank + size - 1) % size), tag_(tag),
        max_chunk_(max_chunk) {
    if (!plan_.steps.empty()) post();
  }

  bool test() override {
    while (step_ < plan_.steps.size()) {
      int done = 1;
      LLMTRAIN_MPI_CHECK(MPI_Testall(int(requests_.size()), requests_.data(), &done, MPI_STATUSES_IGNORE));
      if (!done) return false;
      arrived();
    }
    return true;
  }
  void wait() override {
    while (step_ < plan_.steps.size()) {
      LLMTRAIN_MPI_CHECK(MPI_Waitall(int(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE));
      arrived();
    }
  }

 private:
  void post() {
    const RingStep& step = plan_.steps[step_];
    requests_.clear();
    for_chunks(step.recv_n, max_chunk_, [&](std::size_t offset, int n) {
      LLMTRAIN_MPI_CHECK(MPI_Irecv(step.recv + offset * width_, n, datatype_, previous_, tag_, comm_,
                                   &requests_.emplace_back(MPI_REQUEST_NULL)));
    });
    for_chunks(step.send_n, max_chunk_, [&](std::size_t offset, int n) {
      LLMTRAIN_MPI_CHECK(MPI_Isend(step.send + offset * width_, n, datatype_, next_, tag_, comm_,
                                   &requests_.emplace_back(MPI_REQUEST_NULL)));
    });
  }

  // The step's data arrived: add it where the plan says, then start the next step.
  void arrived() {
    const RingStep& step = plan_.steps[step_];
    if (step.addend)
      for_chunks(step.recv_n, max_chunk_, [&](std::size_t offset, int n) {
        LLMTRAIN_MPI_CHECK(
            MPI_Reduce_local(step.addend + offset * width_, step.sum + offset * width_, n, datatype_, sum_));
      });
    if (++step_ < plan_.steps.size()) post();
  }

  RingPlan plan_;
  MPI_Datatype datatype_;
  MPI_Op sum_;
  std::size_t width_;
  MPI_Comm comm_;
  int next_, previous_, tag_;
  std::size_t max_chunk_;
  std::vector<MPI_Request> requests_;
  std::size_t step_ = 0;
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

  // A ring (see Ring) from as many elements as members; below that (a scalar) libnbc's, whose turn-taking
  // costs nothing there.
  Request all_reduce_sum(void* data, std::size_t count, DType type) override {
    const std::size_t width = dtype_size(type);
    char* bytes = static_cast<char*>(data);
    if (size_ == 1 || count == 0) return Request();
    if (count >= std::size_t(size_))
      return ring(all_reduce_plan(bytes, count, width, rank_, size_), type);
    auto pending = start();
    LLMTRAIN_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, bytes, int(count), types_->datatype(type), types_->sum(type),
                                      comm_, pending->add()));
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
    const std::size_t width = dtype_size(type);
    if (size_ == 1) {
      if (count > 0) std::memcpy(out, in, count * width);
      return Request();
    }
    return ring(reduce_scatter_plan(static_cast<const char*>(in), static_cast<char*>(out), count, width, rank_, size_),
                type);
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

  // Each ring operation's messages carry a tag of their own, so that two in flight never match each other's
  // (every member numbers them alike: collectives are called in the same order on all members).
  Request ring(RingPlan plan, DType type) {
    const int tag = int(rings_++ % std::uint64_t(tag_limit_));
    return Request(std::make_unique<Ring>(registry_, std::move(plan), types_->datatype(type), types_->sum(type),
                                          dtype_size(type), comm_, rank_, size_, tag, max_chunk_));
  }

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
  std::uint64_t rings_ = 0;
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
