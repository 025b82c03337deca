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
  message = cat("rank ", first_failed, ": ", message);
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

herr_t select_flat_range(hid_t space, const std::vector<hsize_t>& shape, std::uint64_t begin, std::uint64_t end) {
  if (begin >= end) return H5Sselect_none(space);
  if (shape.size() == 1) {
    const hsize_t start = begin, count = end - begin;
    return H5Sselect_hyperslab(space, H5S_SELECT_SET, &start, nullptr, &count, nullptr);
  }
  LLMTRAIN_CHECK(shape.size() == 2, "checkpoint: tensors of rank ", shape.size(), " are not supported (1 or 2)");
  const hsize_t cols = shape[1];
  const hsize_t first_row = begin / cols, last_row = (end - 1) / cols;
  H5S_seloper_t op = H5S_SELECT_SET;
  auto add = [&](hsize_t row, hsize_t col, hsize_t rows, hsize_t ncols) {
    const hsize_t start[2] = {row, col}, count[2] = {rows, ncols};
    const herr_t status = H5Sselect_hyperslab(space, op, start, nullptr, count, nullptr);
    op = H5S_SELECT_OR;
    return status;
  };
  if (first_row == last_row) return add(first_row, begin % cols, 1, end - begin);
  hsize_t row = first_row;
  if (begin % cols != 0) {
    if (add(row, begin % cols, 1, cols - begin % cols) < 0) return -1;
    ++row;
  }
  const hsize_t full_end = end % cols == 0 ? last_row + 1 : last_row;  // rows [row, full_end) are whole
  if (full_end > row && add(row, 0, full_end - row, cols) < 0) return -1;
  if (end % cols != 0 && add(last_row, 0, 1, end % cols) < 0) return -1;
  return 0;
}

}  // namespace llmtrain::ckpt::h5
