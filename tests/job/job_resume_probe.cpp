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

#include "llmtrain/config/config.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/data/simulate.hpp"
#include "llmtrain/data/tokenizer_encoder.hpp"
#include "llmtrain/dist/spmd_main.hpp"
#include "llmtrain/job/job.hpp"
#include "llmtrain/job/options.hpp"
#include "epoch0_audit.hpp"

namespace {

using namespace llmtrain;
int check(const Config& config, const std::filesystem::path& dir) {
  const auto before = testing::audit_epoch0(config, {dir / "a"});
  const auto all = testing::audit_epoch0(config, {dir / "a", dir / "b"});
  std::printf("%zu documents of epoch 0 checked; %d rows before the save (3 ranks), %d after the restore (2 ranks); "
              "%d problems\n", all.documents, before.rows, all.rows - before.rows, all.problems);
  return all.problems == 0 && before.rows > 0 && all.rows > before.rows ? 0 : 1;
}

int run(const std::string& mode, const std::filesystem::path& dir, const std::string& config_path, dist::Runtime& runtime) {
  Config config = load_config(config_path);
  config.log.provenance = true;
  config.train.run_dir = (dir / (mode == "save" ? "a" : "b")).string();
  if (mode == "resume") config.train.steps *= 6;
  Kokkos::ScopeGuard kokkos;
  job::Job job(config, runtime, 1e11);
  if (mode == "resume") job.restore_loader(data::load_state_dir((dir / "state").string()));
  job.run();
  if (mode == "save") {
    const std::vector<std::string> states = job.loader_states();
    LLMTRAIN_CHECK(int(states.size()) == runtime.size(), "expected one state per rank");
    if (runtime.rank() == 0)
      for (std::size_t r = 0; r < states.size(); ++r) data::save_state_file((dir / "state").string(), int(r), states[r]);
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
