// Checkpoint write and read bandwidth for a model preset (issue 13's benchmark; perf/ckpt_bench.sh runs it
// beside dd). Each rank holds what the replicated store holds (whole units of parameters and both AdamW
// moments); the loader state is left out (kilobytes). Per repetition: write_checkpoint (checksums, parallel
// HDF5 write, fsync, rename) timed end to end, then a fresh Reader reading every unit back (what a resume
// reads) after evicting the file from the page cache, then verify(). Rank 0 prints one JSON line per repetition.
//   mpirun -np W ckpt_bench CONFIG DIR REPEATS
#include <fcntl.h>
#include <unistd.h>

#include <Kokkos_Core.hpp>
#include <cstdio>
#include <filesystem>
#include <string>

#include "llmtrain/ckpt/checkpoint.hpp"
#include "llmtrain/config/config.hpp"
#include "llmtrain/core/timer.hpp"
#include "llmtrain/dist/spmd_main.hpp"
#include "llmtrain/job/options.hpp"

namespace {

using namespace llmtrain;

std::vector<model::ParamUnit<float>> filled_units(const ModelConfig& config, float salt) {
  auto units = model::allocate_units<float>(model::unit_layouts(config), "bench");
  for (auto& u : units)
    for (std::size_t i = 0; i < u.flat.size(); ++i) u.flat(i) = float(i % 1000) * 1e-3f + salt;
  return units;
}

// Evicts the file from the page cache (its pages are clean after the writer's fsync), so the read that
// follows comes from the disk, as a resume after a restart does.
void evict(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return;
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}

double timed(dist::Runtime& runtime, const std::function<void()>& work) {
  runtime.barrier();
  const Stopwatch watch;
  work();
  runtime.barrier();
  return watch.seconds();
}

int run(const std::string& config_path, const std::string& dir, int repeats, dist::Runtime& runtime) {
  const Config config = load_config(config_path);
  const ModelConfig model = job::model_config(config, 50257);  // the GPT-2 vocabulary of the presets
  Kokkos::ScopeGuard kokkos;
  auto params = filled_units(model, 0.f), m = filled_units(model, 1.f), v = filled_units(model, 2.f);
  ckpt::Contents contents;
  contents.metadata.world_size = runtime.size();
  contents.metadata.strategy = "replicated";
  contents.metadata.config = to_toml(config);
  contents.params = &params, contents.first_moments = &m, contents.second_moments = &v;
  contents.rng = {1, 2};
  if (runtime.rank() == 0) std::filesystem::create_directories(dir);
  const std::string path = dir + "/step_00000001.h5";
  for (int r = 0; r < repeats; ++r) {
    std::uint64_t bytes = 0;
    const double write_s = timed(runtime, [&] {
      bytes = ckpt::write_checkpoint(path, contents, runtime.comm(),
                                     {config.checkpoint.alignment, config.checkpoint.file_locking, 0});
    });
    if (runtime.rank() == 0) evict(path);
    const double read_s = timed(runtime, [&] {
      ckpt::Reader reader(path, runtime.comm());
      reader.read_units("model", params, "");
      reader.read_units("optim", m, "m");
      reader.read_units("optim", v, "v");
    });
    const double verify_s = timed(runtime, [&] { ckpt::Reader(path, runtime.comm()).verify(); });
    if (runtime.rank() == 0)
      std::printf("{\"ranks\":%d,\"bytes\":%llu,\"write_s\":%.3f,\"write_MBps\":%.1f,\"read_s\":%.3f,\"read_MBps\":%.1f,"
                  "\"verify_s\":%.3f}\n",
                  runtime.size(), (unsigned long long)bytes, write_s, double(bytes) / write_s / 1e6, read_s,
                  double(bytes) / read_s / 1e6, verify_s);
    std::fflush(stdout);
  }
  if (runtime.rank() == 0) std::filesystem::remove(path);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: ckpt_bench CONFIG DIR REPEATS\n");
    return 2;
  }
  const std::string config = argv[1], dir = argv[2];
  const int repeats = std::atoi(argv[3]);
  return dist::run_spmd(argc, argv, [&](dist::Runtime& runtime) { return run(config, dir, repeats, runtime); });
}
