// llmtrain: the SPMD trainer. `mpirun -np N llmtrain [options] input.toml`.
//
// Every rank reads and validates the configuration (agreeing on failure, so a bad file is reported once
// and every rank exits non-zero), sets up logging and the stop-signal flag, and then runs the job.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "dry_run_report.hpp"
#include "llmtrain/core/config.hpp"
#include "llmtrain/core/log.hpp"
#include "llmtrain/core/stop_signal.hpp"
#include "llmtrain/dist/collectives.hpp"
#include "llmtrain/dist/spmd_main.hpp"

namespace {

const char* kUsage =
    "usage: llmtrain [options] input.toml\n"
    "\n"
    "Pre-trains a Llama/Granite-style decoder as configured by input.toml; run it under mpirun or srun\n"
    "with one rank per device (or per CPU socket).\n"
    "\n"
    "options:\n"
    "  -h, --help            print this help and exit\n"
    "  -V, --version         print the version and build features and exit\n"
    "  -n, --dry-run         validate the configuration, print it resolved (defaults included), the\n"
    "                        parameter count and a per-rank memory estimate, and exit\n"
    "      --config-reference  print the configuration reference (docs/config.md) and exit\n"
    "\n"
    "Configuration keys: docs/config.md. Design: docs/architecture.md.\n";

struct Options {
  bool dry_run = false;
  std::string config_path;
};

void print_version() {
  std::printf("llmtrain %s (%s build; collectives: mpi%s)\n", LLMTRAIN_VERSION, LLMTRAIN_BUILD_TYPE,
#ifdef LLMTRAIN_WITH_CUDA
              ", nccl"
#else
              ""
#endif
  );
}

// Returns the options, or exits for --help/--version/--config-reference and usage errors (before MPI
// starts, so these work without mpirun).
Options parse_arguments(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (arg == "-V" || arg == "--version") {
      print_version();
      std::exit(0);
    } else if (arg == "--config-reference") {
      std::fputs(llmtrain::config_reference_markdown().c_str(), stdout);
      std::exit(0);
    } else if (arg == "-n" || arg == "--dry-run") {
      options.dry_run = true;
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "llmtrain: unknown option '%s'\n\n%s", arg.c_str(), kUsage);
      std::exit(2);
    } else if (options.config_path.empty()) {
      options.config_path = arg;
    } else {
      std::fprintf(stderr, "llmtrain: more than one configuration file given ('%s' and '%s')\n\n%s",
                   options.config_path.c_str(), arg.c_str(), kUsage);
      std::exit(2);
    }
  }
  if (options.config_path.empty()) {
    std::fprintf(stderr, "llmtrain: no configuration file given\n\n%s", kUsage);
    std::exit(2);
  }
  return options;
}

int run_job(const Options& options, llmtrain::dist::Runtime& runtime) {
  using namespace llmtrain;
  Config config;
  dist::agree(runtime, [&] { config = load_config(options.config_path); });

  const std::int64_t vocab_size = config.model.vocab_size;
  if (options.dry_run) {
    if (runtime.rank() == 0) {
      std::printf("# llmtrain %s: resolved configuration of %s (%d ranks on %d nodes)\n\n%s", LLMTRAIN_VERSION,
                  config.source_file.c_str(), runtime.size(), runtime.node_count(), to_toml(config).c_str());
      if (vocab_size > 0)
        std::fputs(apps::dry_run_report(config, apps::model_size(config, vocab_size), runtime.size()).c_str(), stdout);
      else
        std::puts("model: vocab_size = 0 takes the tokenizer's size, which this build cannot read yet: "
                  "set model.vocab_size for a parameter count and memory estimate");
    }
    return 0;
  }

  std::string per_rank_log;
  if (config.log.per_rank) {
    const std::string dir = config.log.dir.empty() ? config.train.run_dir : config.log.dir;
    dist::agree(runtime, [&] { std::filesystem::create_directories(dir); });
    per_rank_log = dir + "/rank-" + std::to_string(runtime.rank()) + ".log";
  }
  dist::agree(runtime, [&] { configure_logging(runtime.rank(), parse_log_level(config.log.level), per_rank_log); });
  install_stop_signal_handlers();
  log_info("llmtrain ", LLMTRAIN_VERSION, ": ", runtime.size(), " ranks on ", runtime.node_count(),
           " nodes, configuration ", config.source_file);

  auto collectives = dist::make_collectives(config.parallel.backend, runtime);
  log_info("tensor collectives over ", collectives->name());

  log_info("set-up complete; the model and the training loop are not part of this build yet, so no training "
           "was done. Stopping.");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_arguments(argc, argv);
  return llmtrain::dist::run_spmd(argc, argv, [&](llmtrain::dist::Runtime& runtime) { return run_job(options, runtime); });
}
