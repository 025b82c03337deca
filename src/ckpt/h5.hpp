// The small part of parallel HDF5 the checkpoints use: owned handles, file access over MPI-IO, a flat element
// range of a dataset as a selection, and the agreement on errors that every collective HDF5 call needs.
//
// Why the agreement: HDF5's collective calls must be made by every rank. A rank that failed alone and left
// would leave the others waiting forever, and after a failed write (a full disk) even H5Fclose hangs on every
// rank (measured with both ompio and romio). So each rank records whether its last calls succeeded, the ranks
// agree on it before the next HDF5 call, and a failed write ends the job through MPI_Abort without another
// HDF5 call; the library's own close at exit is switched off (H5dont_atexit) for the same reason.
#pragma once

#include <hdf5.h>
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace llmtrain::ckpt::h5 {

// Once per process, before any other HDF5 call: no automatic error printing, no close at exit.
void init();

// An hid_t closed by its H5*close function when the handle goes (a negative id is a failed call).
class Handle {
 public:
  Handle() = default;
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Handle() { reset(); }
  Handle(Handle&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = -1; }
  Handle& operator=(Handle&& o) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }
  void reset();
  // Forgets the id without closing it (after an agreed write failure no HDF5 call may follow).
  void abandon() { id_ = -1; }

 private:
  hid_t id_ = -1;
  herr_t (*close_)(hid_t) = nullptr;
};

// The most specific message on HDF5's error stack ("" when empty); clears the stack.
std::string error_text();

// Collective agreement on the outcome of the calls since the last check. fatal (writing): a failure on any
// rank is logged by every rank and ends the job through MPI_Abort. Otherwise every rank throws the same
// llmtrain::Error (the message of the lowest failing rank).
class Agreement {
 public:
  Agreement(MPI_Comm comm, bool fatal) : comm_(comm), fatal_(fatal) {}
  // Records a local failure of `what` (HDF5's own message is appended) unless ok.
  bool local(bool ok, const std::string& what);
  void fail_locally(const std::string& message);
  bool failed() const { return !message_.empty(); }  // locally, since the last check
  void check();  // collective

 private:
  MPI_Comm comm_;
  bool fatal_;
  std::string message_;  // the first local failure since the last check
};

// File access property list: MPI-IO on comm, collective metadata reads and writes, objects of at least
// alignment / 2 bytes aligned on `alignment` (0 or 1: none), optional file locking.
Handle file_access(MPI_Comm comm, std::int64_t alignment, bool file_locking);
// Independent data transfer: each rank's part of a dataset is at most three contiguous runs of the file,
// which MPI-IO writes directly; collective buffering would only shuffle them through aggregators.
Handle data_transfer();

// The row-major elements [begin, end) of a dataset with `shape` (rank 1 or 2) as at most three rectangular
// blocks: a partial first row, whole rows, a partial last row. Each block is one contiguous run of a
// contiguous dataset, so it is transferred as one plain write or read rather than as a union of blocks
// (which MPI-IO would handle through a derived datatype).
struct Block {
  std::vector<hsize_t> start, count;
  std::uint64_t offset = 0;    // its first element's position within [begin, end)
  std::uint64_t elements = 0;
};
constexpr int kMaxBlocks = 3;
std::vector<Block> flat_range_blocks(const std::vector<hsize_t>& shape, std::uint64_t begin, std::uint64_t end);

// Every rank makes kMaxBlocks transfers per dataset, empty where it has fewer blocks, so the ranks stay in
// step. write: H5Dwrite of `data` (the element at `begin`); otherwise H5Dread into it. Returns false on error.
bool transfer_range(hid_t dataset, hid_t space, hid_t memory_type, hid_t dxpl, const std::vector<hsize_t>& shape,
                    std::uint64_t begin, std::uint64_t end, std::size_t element_size, void* data, bool write);

}  // namespace llmtrain::ckpt::h5
