// Parallel HDF5 helpers for the checkpoints (see h5.hpp).
#include "h5.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>

#include "llmtrain/core/error.hpp"
#include "llmtrain/core/log.hpp"

namespace llmtrain::ckpt::h5 {

void init() {
  static const bool done = [] {
    H5dont_atexit();
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)done;
}

Handle& Handle::operator=(Handle&& o) noexcept {
  if (this != &o) {
    reset();
    id_ = o.id_;
    close_ = o.close_;
    o.id_ = -1;
  }
  return *this;
}

void Handle::reset() {
  if (id_ >= 0 && close_) close_(id_);
  id_ = -1;
}

std::string error_text() {
  std::string text;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD,
           [](unsigned n, const H5E_error2_t* e, void* out) -> herr_t {
             auto& s = *static_cast<std::string*>(out);
             // The innermost entry says what went wrong (e.g. "No space left on device"); the outermost, where.
             if (n == 0 && e->desc) s = e->desc;
             return 0;
           },
           &text);
  H5Eclear2(H5E_DEFAULT);
  return text;
}

bool Agreement::local(bool ok, const std::string& what) {
  if (!ok) {
    const std::string detail = error_text();
    fail_locally(detail.empty() ? what : cat(what, " (", detail, ")"));
  }
  return ok;
}

void Agreement::fail_locally(const std::string& message) {
  if (message_.empty()) message_ = message;
}

void Agreement::check() {
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  int first_failed = message_.empty() ? INT_MAX : rank;
  MPI_Allreduce(MPI_IN_PLACE, &first_failed, 1, MPI_INT, MPI_MIN, comm_);
  if (first_failed == INT_MAX) return;
  // Every rank reports the same message: the one of the lowest failing rank.
  std::string message = message_;
  int length = int(message.size());
  MPI_Bcast(&length, 1, MPI_INT, first_failed, comm_);
  message.resize(std::size_t(length));
  MPI_Bcast(message.data(), length, MPI_CHAR, first_failed, comm_);
  message_.clear();
  int size = 1;
  MPI_Comm_size(comm_, &size);
  if (size > 1) message = cat("rank ", first_failed, ": ", message);  // one process: no rank to name
  if (fatal_) {
    log_error("checkpoint write failed: ", message, "; ending the job without further HDF5 calls");
    std::fflush(stdout);
    std::fflush(stderr);
    MPI_Abort(comm_, 1);
  }
  throw Error(message, __FILE__, __LINE__);
}

Handle file_access(MPI_Comm comm, std::int64_t alignment, bool file_locking) {
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (!fapl.ok()) return fapl;
  bool ok = H5Pset_fapl_mpio(fapl.get(), comm, MPI_INFO_NULL) >= 0 &&
            H5Pset_all_coll_metadata_ops(fapl.get(), 1) >= 0 && H5Pset_coll_metadata_write(fapl.get(), 1) >= 0 &&
            H5Pset_file_locking(fapl.get(), file_locking, 1) >= 0;
  if (ok && alignment > 1) ok = H5Pset_alignment(fapl.get(), hsize_t(alignment / 2), hsize_t(alignment)) >= 0;
  if (!ok) fapl.reset();
  return fapl;
}

Handle data_transfer() {
  Handle dxpl(H5Pcreate(H5P_DATASET_XFER), H5Pclose);
  if (dxpl.ok() && H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_INDEPENDENT) < 0) dxpl.reset();
  return dxpl;
}

std::vector<Block> flat_range_blocks(const std::vector<hsize_t>& shape, std::uint64_t begin, std::uint64_t end) {
  std::vector<Block> blocks;
  if (begin >= end) return blocks;
  if (shape.size() == 1) return {{{begin}, {end - begin}, 0, end - begin}};
  LLMTRAIN_CHECK(shape.size() == 2, "checkpoint: tensors of rank ", shape.size(), " are not supported (1 or 2)");
  const hsize_t cols = shape[1];
  auto add = [&](hsize_t row, hsize_t col, hsize_t rows, hsize_t ncols) {
    blocks.push_back({{row, col}, {rows, ncols}, row * cols + col - begin, rows * ncols});
  };
  const hsize_t first_row = begin / cols, last_row = (end - 1) / cols;
  if (first_row == last_row) {
    add(first_row, begin % cols, 1, end - begin);
    return blocks;
  }
  hsize_t row = first_row;
  if (begin % cols != 0) add(row++, begin % cols, 1, cols - begin % cols);
  const hsize_t full_end = end % cols == 0 ? last_row + 1 : last_row;  // rows [row, full_end) are whole
  if (full_end > row) add(row, 0, full_end - row, cols);
  if (end % cols != 0) add(last_row, 0, 1, end % cols);
  return blocks;
}

bool transfer_range(hid_t dataset, hid_t space, hid_t memory_type, hid_t dxpl, const std::vector<hsize_t>& shape,
                    std::uint64_t begin, std::uint64_t end, std::size_t element_size, void* data, bool write) {
  const std::vector<Block> blocks = flat_range_blocks(shape, begin, end);
  hsize_t dummy = 0;
  for (int b = 0; b < kMaxBlocks; ++b) {
    const bool used = b < int(blocks.size());
    const hsize_t count = used ? blocks[std::size_t(b)].elements : 1;
    Handle memory(H5Screate_simple(1, &count, nullptr), H5Sclose);
    if (!memory.ok()) return false;
    herr_t status = used ? H5Sselect_hyperslab(space, H5S_SELECT_SET, blocks[std::size_t(b)].start.data(), nullptr,
                                               blocks[std::size_t(b)].count.data(), nullptr)
                         : std::min(H5Sselect_none(space), H5Sselect_none(memory.get()));
    if (status < 0) return false;
    void* at = used ? static_cast<void*>(static_cast<char*>(data) + blocks[std::size_t(b)].offset * element_size)
                    : static_cast<void*>(&dummy);
    status = write ? H5Dwrite(dataset, memory_type, memory.get(), space, dxpl, at)
                   : H5Dread(dataset, memory_type, memory.get(), space, dxpl, at);
    if (status < 0) return false;
  }
  return true;
}

}  // namespace llmtrain::ckpt::h5
