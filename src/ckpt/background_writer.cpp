// Asynchronous checkpoint writes from a snapshot (see include/llmtrain/ckpt/background_writer.hpp).
#include "llmtrain/ckpt/background_writer.hpp"

#include <Kokkos_Core.hpp>
#include <cstring>

#include "llmtrain/core/error.hpp"
#include "llmtrain/core/timer.hpp"
#include "owned_ranges.hpp"

namespace llmtrain::ckpt {
namespace {

// Buffers for the owned part [lo, hi) of each unit, laid out as a unit whose range is that part, so that
// write_checkpoint() writes them as it would the live units (no two ranks own the same part).
std::vector<model::ParamUnit<float>> allocate_owned(const std::vector<model::ParamUnit<float>>& units,
                                                    const std::vector<std::pair<std::int64_t, std::int64_t>>& owned,
                                                    const std::string& label) {
  std::vector<model::ParamUnit<float>> out;
  for (std::size_t u = 0; u < units.size(); ++u) {
    const auto [lo, hi] = owned[u];
    Kokkos::View<float*> flat(Kokkos::view_alloc(Kokkos::WithoutInitializing, label + "." + units[u].layout.name),
                              std::size_t(hi - lo));
    out.push_back({units[u].layout, flat, lo});
  }
  return out;
}

void copy_owned(const std::vector<model::ParamUnit<float>>& from, std::vector<model::ParamUnit<float>>& to) {
  for (std::size_t u = 0; u < from.size(); ++u)
    if (to[u].flat.size() > 0)
      std::memcpy(to[u].flat.data(), from[u].flat.data() + (to[u].begin - from[u].begin), to[u].flat.size() * sizeof(float));
}

}  // namespace

BackgroundWriter::BackgroundWriter(MPI_Comm comm) {
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  LLMTRAIN_CHECK(level == MPI_THREAD_MULTIPLE, "asynchronous checkpoints need MPI_THREAD_MULTIPLE; MPI provides level ",
                 level);
  MPI_Comm_dup(comm, &comm_);
}

BackgroundWriter::~BackgroundWriter() {
  wait();
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

double BackgroundWriter::staging_bytes(std::int64_t parameters, int world_size) {
  return 3.0 * 4.0 * double(parameters) / double(world_size > 0 ? world_size : 1);
}

BackgroundWriter::Started BackgroundWriter::start(const std::string& path, const Contents& contents,
                                                  const WriteOptions& options,
                                                  std::function<void(std::uint64_t, double)> after_write) {
  LLMTRAIN_CHECK(contents.params && contents.first_moments && contents.second_moments,
                 "checkpoint: parameters or moments missing");
  Started started;
  started.blocked_s = wait();
  const Stopwatch copying;
  if (owned_.empty()) {  // the units' ranges are the run's: the owned parts are computed once
    int rank = 0, size = 1;
    MPI_Comm_rank(comm_, &rank);
    MPI_Comm_size(comm_, &size);
    owned_ = owned_ranges(*contents.params, comm_, rank, size);
    params_ = allocate_owned(*contents.params, owned_, "checkpoint staging");
    first_moments_ = allocate_owned(*contents.first_moments, owned_, "checkpoint staging m");
    second_moments_ = allocate_owned(*contents.second_moments, owned_, "checkpoint staging v");
  }
  copy_owned(*contents.params, params_);
  copy_owned(*contents.first_moments, first_moments_);
  copy_owned(*contents.second_moments, second_moments_);
  staged_ = contents;
  staged_.params = &params_;
  staged_.first_moments = &first_moments_;
  staged_.second_moments = &second_moments_;
  started.snapshot_s = copying.seconds();

  done_ = false;
  thread_ = std::thread([this, path, options, after_write = std::move(after_write)] {
    try {
      const Stopwatch writing;
      const std::uint64_t bytes = write_checkpoint(path, staged_, comm_, options);
      if (after_write) after_write(bytes, writing.seconds());
    } catch (...) {
      failure_ = std::current_exception();
    }
    done_ = true;
  });
  return started;
}

double BackgroundWriter::wait() {
  if (!thread_.joinable()) return 0;
  const Stopwatch waiting;
  thread_.join();
  return waiting.seconds();
}

void BackgroundWriter::rethrow_failure() {
  if (busy() || !failure_) return;
  std::exception_ptr failure = std::exchange(failure_, nullptr);
  std::rethrow_exception(failure);
}

}  // namespace llmtrain::ckpt
