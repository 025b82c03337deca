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

class MpiPending;
using Registry = std::vector<MpiPending*>;

// One Request: the MPI requests of all chunks of one operation.
class MpiPending final : public Request::Pending {
 public:
  explicit MpiPending(std::shared_ptr<Registry> registry) : registry_(std::move(registry)) {
    registry_->push_back(this);
  }
  ~MpiPending() override { registry_->erase(std::find(registry_->begin(), registry_->end(), this)); }
  MpiPending(const MpiPending&) = delete;
  MpiPending& operator=(const MpiPending&) = delete;

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
  std::shared_ptr<Registry> registry_;
  std::vector<MPI_Request> requests_;  // completed ones become MPI_REQUEST_NULL
};

class MpiCollectives final : public Collectives {
 public:
  // Takes ownership of comm.
  MpiCollectives(MPI_Comm comm, std::shared_ptr<const MpiDatatypes> types, std::size_t max_chunk)
      : comm_(comm), types_(std::move(types)), max_chunk_(max_chunk) {
    LLMTRAIN_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
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
    auto pending = start();
    const MPI_Datatype datatype = types_->datatype(type);
    const MPI_Op sum = types_->sum(type);
    if (count * std::size_t(size_) <= max_chunk_) {
      if (count > 0)
        LLMTRAIN_MPI_CHECK(MPI_Ireduce_scatter_block(in, out, int(count), datatype, sum, comm_, pending->add()));
      return Request(std::move(pending));
    }
    // Too large for int counts: block r is reduced onto member r, chunk by chunk.
    const std::size_t width = dtype_size(type);
    const char* blocks = static_cast<const char*>(in);
    char* mine = static_cast<char*>(out);
    for (int root = 0; root < size_; ++root)
      for_chunks(count, [&](std::size_t offset, int n) {
        const char* chunk = blocks + (std::size_t(root) * count + offset) * width;
        void* target = root == rank_ ? mine + offset * width : nullptr;
        LLMTRAIN_MPI_CHECK(MPI_Ireduce(chunk, target, n, datatype, sum, root, comm_, pending->add()));
      });
    return Request(std::move(pending));
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
    for (MpiPending* pending : *registry_) pending->test();
  }

  void agree_sum(double* values, std::size_t count) override { agree(values, count, MPI_DOUBLE, MPI_SUM); }
  void agree_max(double* values, std::size_t count) override { agree(values, count, MPI_DOUBLE, MPI_MAX); }
  void agree_sum(std::uint64_t* values, std::size_t count) override { agree(values, count, MPI_UINT64_T, MPI_SUM); }

 private:
  std::unique_ptr<MpiPending> start() { return std::make_unique<MpiPending>(registry_); }

  template <typename Issue>
  void for_chunks(std::size_t count, Issue issue) const {
    for (std::size_t offset = 0; offset < count; offset += max_chunk_)
      issue(offset, int(std::min(max_chunk_, count - offset)));
  }

  void agree(void* values, std::size_t count, MPI_Datatype datatype, MPI_Op op) {
    LLMTRAIN_CHECK(count <= std::size_t(INT_MAX), "agreement on ", count, " values: meant for a few scalars");
    if (count > 0) LLMTRAIN_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, values, int(count), datatype, op, comm_));
  }

  MPI_Comm comm_;
  std::shared_ptr<const MpiDatatypes> types_;
  std::size_t max_chunk_;
  int rank_ = 0, size_ = 1;
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
