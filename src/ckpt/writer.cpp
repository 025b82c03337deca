// Writing a checkpoint: every rank's slices as hyperslabs of global datasets, into a .tmp file that is
// synced and renamed only when complete (include/llmtrain/ckpt/checkpoint.hpp has the layout).
#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <cstdlib>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <thread>

#include "h5.hpp"
#include "layout.hpp"
#include "owned_ranges.hpp"
#include "llmtrain/ckpt/checkpoint.hpp"
#include "llmtrain/core/error.hpp"

namespace llmtrain::ckpt {
namespace {

// One dataset and the element range [begin, end) of it that this rank writes from `data`.
struct Piece {
  std::string name;
  ElementType type;
  std::vector<hsize_t> shape;
  std::uint64_t begin = 0, end = 0;
  const void* data = nullptr;
  std::uint64_t elements() const {
    std::uint64_t n = 1;
    for (hsize_t s : shape) n *= s;
    return n;
  }
};

// The tensors of every unit; each rank writes its owned part [lo, hi) of each unit's flat buffer.
void add_units(std::vector<Piece>& out, const std::string& group, const std::string& suffix,
               const std::vector<model::ParamUnit<float>>& units,
               const std::vector<std::pair<std::int64_t, std::int64_t>>& owned) {
  for (std::size_t u = 0; u < units.size(); ++u) {
    const auto& unit = units[u];
    const auto [lo, hi] = owned[u];
    for (const auto& t : unit.layout.tensors) {
      Piece p{tensor_dataset(group, unit.layout.name, t.name, suffix), ElementType::f32, {}, 0, 0, nullptr};
      for (auto s : t.shape) p.shape.push_back(hsize_t(s));
      const std::int64_t a = std::max(lo, t.offset), b = std::min(hi, t.offset + t.size());
      if (a < b) {
        p.begin = std::uint64_t(a - t.offset), p.end = std::uint64_t(b - t.offset);
        p.data = unit.flat.data() + (a - unit.begin);
      }
      out.push_back(std::move(p));
    }
  }
}

// Each rank writes its own blob as row `rank`; rank 0 writes the offsets. Blobs are the same on every rank.
void add_loader(std::vector<Piece>& out, const std::vector<std::string>& blobs,
                std::string& joined, std::vector<std::uint64_t>& offsets, int rank) {
  if (blobs.empty()) return;
  offsets.assign(1, 0);
  for (const auto& b : blobs) joined += b, offsets.push_back(joined.size());
  Piece states{"/loader/train/states", ElementType::u8, {hsize_t(joined.size())}, 0, 0, nullptr};
  if (rank < int(blobs.size())) {
    states.begin = offsets[std::size_t(rank)], states.end = offsets[std::size_t(rank) + 1];
    states.data = joined.data() + states.begin;
  }
  out.push_back(states);
  out.push_back({"/loader/train/offsets", ElementType::u64, {hsize_t(offsets.size())}, 0,
                 rank == 0 ? offsets.size() : 0, offsets.data()});
}

bool write_attribute(hid_t object, const char* name, hid_t type, const void* value) {
  h5::Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  h5::Handle attr(H5Acreate2(object, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  return space.ok() && attr.ok() && H5Awrite(attr.get(), type, value) >= 0;
}

bool write_string_attribute(hid_t object, const char* name, const std::string& value) {
  h5::Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  if (!type.ok() || H5Tset_size(type.get(), std::max<std::size_t>(1, value.size())) < 0) return false;
  const std::string padded = value.empty() ? std::string(1, '\0') : value;
  return write_attribute(object, name, type.get(), padded.data());
}

bool write_metadata(hid_t file, const Metadata& m) {
  return write_attribute(file, "step", H5T_NATIVE_INT64, &m.step) &&
         write_attribute(file, "tokens_seen", H5T_NATIVE_INT64, &m.tokens_seen) &&
         write_attribute(file, "world_size", H5T_NATIVE_INT64, &m.world_size) &&
         write_attribute(file, "format_version", H5T_NATIVE_INT64, &m.format_version) &&
         write_attribute(file, "tokenizer_fingerprint", H5T_NATIVE_UINT64, &m.tokenizer_fingerprint) &&
         write_string_attribute(file, "strategy", m.strategy) && write_string_attribute(file, "config", m.config) &&
         write_string_attribute(file, "corpus", m.corpus) &&
         write_string_attribute(file, "code_version", m.code_version);
}

// What a file needs: its datasets' bytes, one alignment gap before each that is aligned, 1 MiB of metadata.
constexpr std::uint64_t kMetadataSpace = 1 << 20;
std::uint64_t dataset_space(std::uint64_t bytes, std::int64_t alignment) {
  return bytes + (alignment > 1 && bytes >= std::uint64_t(alignment / 2) ? std::uint64_t(alignment) : 0);
}

// Free bytes in `dir` against what the file needs.
void check_free_space(const std::string& dir, const std::vector<Piece>& pieces, std::int64_t alignment,
                      h5::Agreement& agreement) {
  std::uint64_t need = kMetadataSpace;
  for (const auto& p : pieces) need += dataset_space(p.elements() * element_size(p.type), alignment);
  struct statvfs fs {};
  if (statvfs(dir.c_str(), &fs) != 0)
    agreement.fail_locally(cat(dir, ": cannot read the free space: ", std::strerror(errno)));
  else if (std::uint64_t(fs.f_bavail) * fs.f_frsize < need)
    agreement.fail_locally(cat(dir, ": not enough free space for a checkpoint: ", std::uint64_t(fs.f_bavail) * fs.f_frsize,
                               " bytes free, about ", need, " needed"));
}

bool fsync_path(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) return false;
  const bool ok = ::fsync(fd) == 0;
  return ::close(fd) == 0 && ok;
}

// Ends the process if the write is not done within `seconds` (0: never): a file system that stopped answering
// must not hold the job forever. _Exit, not MPI_Abort: this thread may not call MPI; mpirun then ends the rest.
class Watchdog {
 public:
  Watchdog(double seconds, const std::string& path) {
    if (seconds <= 0) return;
    thread_ = std::thread([this, seconds, path] {
      std::unique_lock<std::mutex> lock(mutex_);
      if (done_changed_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return done_; })) return;
      std::fprintf(stderr, "error: checkpoint write to %s did not finish within checkpoint.timeout_s = %g s; ending the job\n",
                   path.c_str(), seconds);
      std::fflush(stderr);
      std::_Exit(1);
    });
  }
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    done_changed_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable done_changed_;
  bool done_ = false;
  std::thread thread_;
};

// LLMTRAIN_FAULT=ckpt.slow:<rank>: that rank waits 2 s before it writes data, as on a slow file system, so that
// training runs ahead of an asynchronous write (tests check the file still holds its step's state).
void maybe_delay(int rank) {
  const char* fault = std::getenv("LLMTRAIN_FAULT");
  if (fault && std::string(fault) == cat("ckpt.slow:", rank)) std::this_thread::sleep_for(std::chrono::seconds(2));
}

// LLMTRAIN_FAULT=ckpt.write:<rank>: that rank dies here, with part of the data written.
// LLMTRAIN_FAULT=ckpt.stall:<rank>: that rank stops here, as on a file system that no longer answers, and
// only the watchdog ends it.
void maybe_inject_fault(int rank) {
  const char* fault = std::getenv("LLMTRAIN_FAULT");
  if (fault && std::string(fault) == cat("ckpt.write:", rank)) std::raise(SIGKILL);
  if (fault && std::string(fault) == cat("ckpt.stall:", rank))
    for (;;) ::pause();
}

}  // namespace

std::uint64_t space_needed(const ModelConfig& model, std::int64_t alignment) {
  std::uint64_t need = kMetadataSpace;
  for (const auto& unit : model::unit_layouts(model))
    for (const auto& t : unit.tensors) need += 3 * dataset_space(std::uint64_t(t.size()) * 4, alignment);
  return need;
}

std::uint64_t write_checkpoint(const std::string& path, const Contents& c, MPI_Comm comm, const WriteOptions& options) {
  LLMTRAIN_CHECK(c.params && c.first_moments && c.second_moments, "checkpoint: parameters or moments missing");
  const Watchdog watchdog(options.timeout_s, path);
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const auto owned = owned_ranges(*c.params, comm, rank, size);  // moments have the parameters' ranges

  std::vector<Piece> pieces;
  add_units(pieces, "model", "", *c.params, owned);
  add_units(pieces, "optim", "m", *c.first_moments, owned);
  add_units(pieces, "optim", "v", *c.second_moments, owned);
  pieces.push_back({"/optim/step", ElementType::i64, {1}, 0, rank == 0 ? 1u : 0u, &c.optimizer_step});
  std::string loader_joined;
  std::vector<std::uint64_t> loader_offsets;
  add_loader(pieces, c.train_loader, loader_joined, loader_offsets, rank);
  pieces.push_back({"/rng", ElementType::u64, {hsize_t(c.rng.size())}, 0, rank == 0 ? c.rng.size() : 0, c.rng.data()});

  const std::string tmp = path + ".tmp";
  const std::string dir = std::filesystem::path(path).parent_path().string();
  h5::Agreement precheck(comm, false);
  if (rank == 0) {
    std::error_code ec;
    std::filesystem::remove(tmp, ec);  // a stale one from a killed run
    check_free_space(dir.empty() ? "." : dir, pieces, options.alignment, precheck);
  }
  precheck.check();

  h5::init();
  // A file size limit (ulimit -f, common on batch systems) must fail the write with EFBIG, reported like any
  // other write error, rather than kill the rank with SIGXFSZ and leave the others waiting.
  std::signal(SIGXFSZ, SIG_IGN);
  h5::Agreement agree(comm, true);
  h5::Handle fapl = h5::file_access(comm, options.alignment, options.file_locking);
  h5::Handle dxpl = h5::data_transfer();
  h5::Handle lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  h5::Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  agree.local(fapl.ok() && dxpl.ok() && lcpl.ok() && dcpl.ok() &&
                  H5Pset_create_intermediate_group(lcpl.get(), 1) >= 0 &&
                  H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER) >= 0,
              "setting up parallel HDF5");
  agree.check();
  h5::Handle file(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), H5Fclose);
  agree.local(file.ok(), cat(tmp, ": cannot create"));
  agree.check();
  agree.local(write_metadata(file.get(), c.metadata), cat(tmp, ": writing the attributes"));
  agree.check();

  // Every dataset is created first (collective metadata; parallel HDF5 allocates its space at once, and no
  // fill is written), then each rank writes its parts without waiting for the others: the transfers are
  // independent, so the ranks need not agree between them. A rank stops at its first failed write, and the
  // ranks agree once, before the next collective call.
  std::vector<h5::Handle> spaces, datasets;
  for (const Piece& p : pieces) {
    spaces.emplace_back(H5Screate_simple(int(p.shape.size()), p.shape.data(), nullptr), H5Sclose);
    datasets.emplace_back(H5Dcreate2(file.get(), p.name.c_str(), file_type(p.type), spaces.back().get(), lcpl.get(),
                                     dcpl.get(), H5P_DEFAULT),
                          H5Dclose);
    agree.local(spaces.back().ok() && datasets.back().ok(), cat(tmp, ": creating ", p.name));
    agree.check();
  }
  // Each part goes in pieces of kWriteChunk bytes, each checksummed just before it is written: the data is
  // read from memory once and copied into the page cache from the CPU's cache (hashing whole tensors on a
  // helper thread beside whole-tensor writes read it twice, and measured up to 2x slower at W = 1).
  constexpr std::uint64_t kWriteChunk = 1 << 20;
  std::vector<std::uint64_t> sums(pieces.size());
  maybe_delay(rank);
  for (std::size_t i = 0; i < pieces.size() && !agree.failed(); ++i) {
    const Piece& p = pieces[i];
    const std::size_t size = element_size(p.type);
    for (std::uint64_t b = p.begin; b < p.end && !agree.failed(); b += kWriteChunk / size) {
      const std::uint64_t e = std::min(p.end, b + kWriteChunk / size);
      const char* at = static_cast<const char*>(p.data) + (b - p.begin) * size;
      sums[i] += checksum(at, p.type, b, e - b);
      agree.local(h5::transfer_range(datasets[i].get(), spaces[i].get(), memory_type(p.type), dxpl.get(), p.shape, b,
                                     e, size, const_cast<char*>(at), true),
                  cat(tmp, ": writing ", p.name));
      maybe_inject_fault(rank);
    }
  }
  agree.check();
  MPI_Allreduce(MPI_IN_PLACE, sums.data(), int(sums.size()), MPI_UINT64_T, MPI_SUM, comm);
  for (std::size_t i = 0; i < pieces.size(); ++i)
    agree.local(write_attribute(datasets[i].get(), "checksum", H5T_NATIVE_UINT64, &sums[i]),
                cat(tmp, ": writing the checksum of ", pieces[i].name));
  agree.check();
  datasets.clear(), spaces.clear();
  dcpl.reset(), lcpl.reset(), dxpl.reset(), fapl.reset();
  agree.local(H5Fclose(file.get()) >= 0, cat(tmp, ": closing"));
  file.abandon();
  agree.check();

  h5::Agreement finish(comm, false);
  if (rank == 0) {
    std::error_code ec;
    if (!fsync_path(tmp, O_RDONLY))
      finish.fail_locally(cat(tmp, ": fsync failed: ", std::strerror(errno)));
    else if (std::filesystem::rename(tmp, path, ec); ec)
      finish.fail_locally(cat(tmp, ": cannot rename to ", path, ": ", ec.message()));
    else if (!fsync_path(dir.empty() ? "." : dir, O_RDONLY | O_DIRECTORY))
      finish.fail_locally(cat(dir, ": fsync of the directory failed: ", std::strerror(errno)));
  }
  finish.check();
  std::uint64_t bytes = rank == 0 ? std::filesystem::file_size(path) : 0;
  MPI_Bcast(&bytes, 1, MPI_UINT64_T, 0, comm);
  return bytes;
}

}  // namespace llmtrain::ckpt
