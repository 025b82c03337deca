// W rank-loaders in one process: the audit tool behind `llmtrain-data simulate` (see simulate.hpp).
#include "llmtrain/data/simulate.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>

#include "audit.hpp"
#include "llmtrain/core/error.hpp"

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

std::vector<std::string> load_state_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> blobs;
  for (int rank = 0;; ++rank) {
    char name[32];
    std::snprintf(name, sizeof name, "rank-%05d.state", rank);
    fs::path path = fs::path(dir) / name;
    if (!fs::exists(path)) break;
    std::ifstream in(path, std::ios::binary);
    blobs.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    LLMTRAIN_CHECK(in.good() || in.eof(), path.string(), ": cannot read");
  }
  LLMTRAIN_CHECK(!blobs.empty(), dir, ": no data loader state (expected rank-00000.state, ...)");
  return blobs;
}

void save_state_file(const std::string& dir, int rank, const std::string& blob) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  char name[32];
  std::snprintf(name, sizeof name, "rank-%05d.state", rank);
  fs::path path = fs::path(dir) / name, tmp = path;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(blob.data(), static_cast<std::streamsize>(blob.size()));
    out.close();
    LLMTRAIN_CHECK(out.good(), tmp.string(), ": cannot write the data loader state");
  }
  fs::rename(tmp, path);  // a crash mid-write never leaves a half state under the real name
}

std::uint64_t simulate(LoaderOptions options, std::shared_ptr<const DocumentEncoder> encoder,
                       const SimulateOptions& sim, std::ostream& log) {
  LLMTRAIN_CHECK(sim.world_size >= 1, "--world-size must be >= 1, got ", sim.world_size);
  LLMTRAIN_CHECK(sim.steps >= 0, "--steps must be >= 0, got ", sim.steps);
  LLMTRAIN_CHECK(!sim.audit || sim.load_state_dir.empty(), "--audit checks fresh runs only (no --load-state)");
  CoverageAudit audit;
  options.batch_rows = sim.batch_rows;
  options.metadata_only = sim.metadata_only;
  std::vector<std::unique_ptr<Loader>> ranks;
  std::vector<std::string> saved;
  if (!sim.load_state_dir.empty()) saved = load_state_dir(sim.load_state_dir);
  for (int r = 0; r < sim.world_size; ++r) {
    ranks.push_back(std::make_unique<Loader>(options, encoder, r, sim.world_size));
    if (!saved.empty()) ranks.back()->restore(saved);
  }
  std::ofstream provenance;
  if (!sim.provenance_path.empty()) {
    std::filesystem::path parent = std::filesystem::path(sim.provenance_path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent);
    provenance.open(sim.provenance_path, std::ios::trunc);
    LLMTRAIN_CHECK(provenance.good(), sim.provenance_path, ": cannot open for writing");
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
    LLMTRAIN_CHECK(provenance.good(), sim.provenance_path, ": write failed");
  }
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
    for (const auto& [file, count] : st.bad_records_by_file) log << "  skipped " << count << " bad records in " << file << "\n";
  }
  return sim.audit ? audit.report(finished_epochs(), log) : 0;
}

}  // namespace llmtrain::data
