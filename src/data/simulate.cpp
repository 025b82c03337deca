// W rank-loaders in one process: the audit tool behind `llmtrain-data simulate` (see simulate.hpp).
#include "llmtrain/data/simulate.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>

#include "audit.hpp"
#include "state.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/data/loader.hpp"

namespace llmtrain::data {

std::string provenance_json(std::int64_t step, int rank, std::int64_t row, const RowProvenance& p) {
  using json = nlohmann::ordered_json;  // keys in the documented order
  json spans = json::array(), special = json::array();
  for (const SpanInfo& s : p.spans)
    spans.push_back({s.dataset, s.file, s.byte_offset, s.epoch, s.token_begin, s.token_end});
  for (const auto& sp : p.special) special.push_back({sp.first, sp.second});
  json line = {{"step", step}, {"rank", rank}, {"row", row}, {"spans", spans}, {"special", special}};
  return line.dump(-1, ' ', false, json::error_handler_t::replace);
}

namespace {

void make_directories(const std::filesystem::path& dir, const char* purpose) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  LLMTRAIN_CHECK(!ec, dir.string(), ": cannot create the directory for ", purpose, ": ", ec.message());
}

// Per dataset, the first epoch that no saved cursor or pending piece has entered: the first one a resumed
// run delivers whole.
std::map<std::string, std::uint32_t> first_epochs_after(const std::vector<std::string>& blobs) {
  std::map<std::string, std::uint32_t> first;
  for (const std::string& blob : blobs) {
    const SavedState s = decode_state(blob);
    auto enter = [&](const std::string& name, std::uint32_t epoch) {
      std::uint32_t& e = first[name];
      e = std::max(e, epoch + 1);
    };
    for (const SavedDataset& d : s.datasets)
      for (const ShardCursor& c : d.cursors) enter(d.name, c.epoch);
    auto spans = [&](const std::vector<Span>& list) {
      for (const Span& span : list) enter(s.datasets[span.doc.dataset].name, span.doc.epoch);
    };
    for (const auto& row : s.window) spans(row);
    spans(s.queue);
  }
  return first;
}

}  // namespace

std::string read_state_file(const std::string& path) {
  struct stat st {};
  LLMTRAIN_CHECK(::stat(path.c_str(), &st) == 0, path, ": cannot read the data loader state: ", std::strerror(errno));
  LLMTRAIN_CHECK(S_ISREG(st.st_mode), path, ": not a regular file (expected a data loader state file)");
  const int fd = ::open(path.c_str(), O_RDONLY);
  LLMTRAIN_CHECK(fd >= 0, path, ": cannot open the data loader state: ", std::strerror(errno));
  std::string blob(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < blob.size()) {
    const ssize_t n = ::read(fd, &blob[got], blob.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : 0;
      ::close(fd);
      LLMTRAIN_FAIL(path, ": cannot read the data loader state: ",
                    err ? std::strerror(err) : "the file shrank while it was read");
    }
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return blob;
}

std::vector<std::string> load_state_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  LLMTRAIN_CHECK(!fs::exists(dir, ec) || fs::is_directory(dir, ec), dir,
                 ": not a directory (--load-state takes the directory holding rank-00000.state, ...)");
  std::vector<std::string> blobs;
  for (int rank = 0;; ++rank) {
    char name[32];
    std::snprintf(name, sizeof name, "rank-%05d.state", rank);
    fs::path path = fs::path(dir) / name;
    if (!fs::exists(path, ec)) break;
    blobs.push_back(read_state_file(path.string()));
  }
  LLMTRAIN_CHECK(!blobs.empty(), dir, ": no data loader state (expected rank-00000.state, ...)");
  return blobs;
}

void save_state_file(const std::string& dir, int rank, const std::string& blob) {
  namespace fs = std::filesystem;
  make_directories(dir, "the data loader state");
  char name[32];
  std::snprintf(name, sizeof name, "rank-%05d.state", rank);
  fs::path path = fs::path(dir) / name, tmp = path;
  tmp += ".tmp";
  std::FILE* out = std::fopen(tmp.c_str(), "wb");
  LLMTRAIN_CHECK(out != nullptr, tmp.string(), ": cannot create the data loader state: ", std::strerror(errno));
  const bool written = std::fwrite(blob.data(), 1, blob.size(), out) == blob.size();
  const int write_errno = errno;
  const bool closed = std::fclose(out) == 0;  // a full disk often shows only here, when the buffer is flushed
  if (!written || !closed) {
    const int err = written ? errno : write_errno;
    std::remove(tmp.c_str());
    LLMTRAIN_FAIL(tmp.string(), ": cannot write the data loader state: ", std::strerror(err));
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);  // a crash mid-write never leaves a half state under the real name
  LLMTRAIN_CHECK(!ec, path.string(), ": cannot rename the data loader state from ", tmp.string(), ": ", ec.message());
}

std::uint64_t simulate(LoaderOptions options, std::shared_ptr<const DocumentEncoder> encoder,
                       const SimulateOptions& sim, std::ostream& log) {
  LLMTRAIN_CHECK(sim.world_size >= 1, "--world-size must be >= 1, got ", sim.world_size);
  LLMTRAIN_CHECK(sim.steps >= 0, "--steps must be >= 0, got ", sim.steps);
  LLMTRAIN_CHECK(sim.prefetch_rows >= 0, "--prefetch must be >= 0, got ", sim.prefetch_rows);
  CoverageAudit audit;
  options.batch_rows = sim.batch_rows;
  options.prefetch_rows = sim.prefetch_rows;
  // --prefetch is there so that the audit and the states cover the hand-off: the thread from the second batch
  // on, whatever the timings (W loaders called in turn would give each one the others' time as work).
  options.prefetch_chooser = always_prefetch_thread;
  options.metadata_only = sim.metadata_only;
  std::vector<std::unique_ptr<Loader>> ranks;
  std::vector<std::string> saved;
  if (!sim.load_state_dir.empty()) {
    saved = load_state_dir(sim.load_state_dir);
    audit.resumed(first_epochs_after(saved));
  }
  for (int r = 0; r < sim.world_size; ++r) {
    ranks.push_back(std::make_unique<Loader>(options, encoder, r, sim.world_size));
    if (!saved.empty()) ranks.back()->restore(saved);
  }
  std::ofstream provenance;
  if (!sim.provenance_path.empty()) {
    std::filesystem::path parent = std::filesystem::path(sim.provenance_path).parent_path();
    if (!parent.empty()) make_directories(parent, "the provenance");
    provenance.open(sim.provenance_path, std::ios::trunc);
    LLMTRAIN_CHECK(provenance.good(), sim.provenance_path, ": cannot open the provenance for writing: ",
                   std::strerror(errno));
  }
  // Epochs of each dataset that every rank has finished (the audit settles them).
  auto finished_epochs = [&ranks] {
    std::map<std::string, std::uint32_t> finished;
    for (const auto& rank : ranks)
      for (const DatasetStats& d : rank->stats().datasets) {
        if (d.epoch == UINT32_MAX) continue;  // no document of the dataset on that rank
        auto [it, fresh] = finished.emplace(d.name, d.epoch);
        if (!fresh) it->second = std::min(it->second, d.epoch);
      }
    return finished;
  };
  for (std::int64_t step = 0; step < sim.steps; ++step) {
    if (sim.audit && step % 1000 == 999) audit.settle(finished_epochs());
    for (int r = 0; r < sim.world_size; ++r) {
      ranks[r]->next();
      const auto& rows = ranks[r]->last_provenance();
      if (sim.audit)
        for (const RowProvenance& row : rows) audit.add(row);
      if (!provenance.is_open()) continue;
      for (std::size_t i = 0; i < rows.size(); ++i)
        provenance << provenance_json(step, r, static_cast<std::int64_t>(i), rows[i]) << '\n';
    }
  }
  if (provenance.is_open()) {
    provenance.close();
    LLMTRAIN_CHECK(provenance.good(), sim.provenance_path, ": cannot write the provenance: ", std::strerror(errno));
  }
  std::uint64_t skipped = 0, skipped_files = 0;
  for (int r = 0; r < sim.world_size; ++r) {
    std::string blob = ranks[r]->state();
    if (!sim.save_state_dir.empty()) save_state_file(sim.save_state_dir, r, blob);
    LoaderStats st = ranks[r]->stats();
    log << "rank " << r << ": state " << blob.size() << " bytes";
    for (const DatasetStats& d : st.datasets) {
      log << "; " << d.name << ": ";
      if (d.epoch == UINT32_MAX) log << "no document on this rank, ";
      else log << "epoch " << d.epoch << ", ";
      log << d.records_read << " records (" << d.bad_records
          << " bad), " << d.tokens_drawn << " tokens drawn";
    }
    if (st.dropped_spans) log << "; " << st.dropped_spans << " pieces dropped on restore";
    log << "\n";
    for (const DatasetStats& d : st.datasets)
      if (d.tokenless_documents > 0)
        log << "  " << d.name << ": " << d.tokenless_documents << " documents without tokens"
            << (d.no_tokens ? " (a whole epoch: skipped on this rank)" : "") << "\n";
    for (const auto& [file, count] : st.bad_records_by_file) log << "  skipped " << count << " bad records in " << file << "\n";
    skipped += st.skipped_records();
    skipped_files += st.bad_records_by_file.size();
  }
  log << "skipped records: " << skipped << " bad records in " << skipped_files << " files (all ranks)\n";
  return sim.audit ? audit.report(finished_epochs(), log) : 0;
}

}  // namespace llmtrain::data
