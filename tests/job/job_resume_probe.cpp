// The job hands out the loaders' agreed global state and restores it on another rank count: run under
// mpirun as two phases of one ctest fixture.
//   save DIR CONFIG    (3 ranks) trains train.steps steps through the job with log.provenance, then writes
//                      the job's global loader state to DIR/state;
//   resume DIR CONFIG  (2 ranks) builds a fresh job, restores DIR/state, trains 6 x train.steps steps (past the end of epoch 0 on every rank),
//                      and rank 0 checks the provenance of both phases against a fresh single-rank pass over
//                      epoch 0: every document of epoch 0 delivered whole, each token exactly once.
#include <Kokkos_Core.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "llmtrain/core/config.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/data/simulate.hpp"
#include "llmtrain/data/tokenizer_encoder.hpp"
#include "llmtrain/dist/spmd_main.hpp"
#include "llmtrain/job/job.hpp"
#include "llmtrain/job/options.hpp"

namespace {

using namespace llmtrain;
using Ranges = std::vector<std::pair<std::uint32_t, std::uint32_t>>;
using DocKey = std::pair<std::string, std::uint64_t>;  // file, byte offset

// Epoch-0 token ranges per document, from every provenance file under `dir`.
void read_provenance(const std::filesystem::path& dir, std::map<DocKey, Ranges>& docs, int& lines) {
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().filename().string().rfind("provenance.rank", 0) != 0) continue;
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      ++lines;
      const auto row = nlohmann::json::parse(line);
      for (const auto& span : row["spans"]) {
        if (span[3].get<std::uint32_t>() != 0) continue;  // epoch
        docs[{span[1].get<std::string>(), span[2].get<std::uint64_t>()}].push_back({span[4], span[5]});
      }
    }
  }
}

// Every document's length in epoch 0, from one fresh loader on one rank.
std::map<DocKey, std::uint32_t> epoch0_lengths(const Config& config) {
  const auto encoder = std::make_shared<data::TokenizerEncoder>(tokenizer::Tokenizer::load(config.tokenizer.path));
  data::Loader loader(job::loader_options(config, config.data.datasets, encoder->tokenizer()), encoder, 0, 1);
  std::map<DocKey, std::uint32_t> length;
  while (loader.stats().datasets[0].epoch == 0) {
    loader.next();
    for (const auto& row : loader.last_provenance())
      for (const auto& s : row.spans)
        if (s.epoch == 0) length[{s.file, s.byte_offset}] = std::max(length[{s.file, s.byte_offset}], s.token_end);
  }
  return length;
}

int check(const Config& config, const std::filesystem::path& dir) {
  std::map<DocKey, Ranges> docs;
  int lines_a = 0, lines_b = 0;
  read_provenance(dir / "a", docs, lines_a);
  read_provenance(dir / "b", docs, lines_b);
  const auto expected = epoch0_lengths(config);
  int problems = 0;
  for (const auto& [key, length] : expected) {
    auto ranges = docs[key];
    std::sort(ranges.begin(), ranges.end());
    std::uint32_t covered = 0;
    for (const auto& [begin, end] : ranges) {
      if (begin != covered) {
        std::fprintf(stderr, "%s@%llu: tokens [%u, %u) %s\n", key.first.c_str(), (unsigned long long)key.second,
                     std::min(begin, covered), std::max(begin, covered), begin < covered ? "delivered twice" : "skipped");
        ++problems;
      }
      covered = std::max(covered, end);
    }
    if (covered != length) {
      std::fprintf(stderr, "%s@%llu: %u of %u tokens delivered\n", key.first.c_str(), (unsigned long long)key.second,
                   covered, length);
      ++problems;
    }
  }
  for (const auto& [key, ranges] : docs)
    if (!expected.count(key)) ++problems, std::fprintf(stderr, "%s@%llu: not a document of epoch 0\n", key.first.c_str(),
                                                      (unsigned long long)key.second);
  std::printf("%zu documents of epoch 0 checked; %d rows before the save (3 ranks), %d after the restore (2 ranks); "
              "%d problems\n", expected.size(), lines_a, lines_b, problems);
  return problems == 0 && lines_a > 0 && lines_b > 0 ? 0 : 1;
}

int run(const std::string& mode, const std::filesystem::path& dir, const std::string& config_path, dist::Runtime& runtime) {
  Config config = load_config(config_path);
  config.log.provenance = true;
  config.train.run_dir = (dir / (mode == "save" ? "a" : "b")).string();
  if (mode == "resume") config.train.steps *= 6;
  Kokkos::ScopeGuard kokkos;
  job::Job job(config, runtime, 1e11);
  if (mode == "resume") job.restore_loaders({data::load_state_dir((dir / "state").string()), {}});
  job.run();
  if (mode == "save") {
    const job::LoaderStates states = job.loader_states();
    LLMTRAIN_CHECK(int(states.train.size()) == runtime.size(), "expected one state per rank");
    if (runtime.rank() == 0)
      for (std::size_t r = 0; r < states.train.size(); ++r) data::save_state_file((dir / "state").string(), int(r), states.train[r]);
    return 0;
  }
  runtime.barrier();  // every rank's provenance is on disk
  return runtime.rank() == 0 ? check(config, dir) : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 || (std::string(argv[1]) != "save" && std::string(argv[1]) != "resume")) {
    std::fprintf(stderr, "usage: job_resume_probe save|resume DIR CONFIG\n");
    return 2;
  }
  const std::string mode = argv[1], dir = argv[2], config = argv[3];
  return dist::run_spmd(argc, argv, [&](dist::Runtime& runtime) { return run(mode, dir, config, runtime); });
}
