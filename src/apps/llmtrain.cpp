// llmtrain: the SPMD trainer. `mpirun -np N llmtrain [options] input.toml`.
//
// Every rank reads and validates the configuration and the tokenizer (agreeing on failure, so a bad file
// is reported once and every rank exits non-zero), sets up logging and the stop-signal flag, opens its
// data loader on its own logical shards, and trains one model replicated across ranks, gradients averaged
// through the collectives.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <Kokkos_Core.hpp>

#include "dry_run_report.hpp"
#include "llmtrain/core/config.hpp"
#include "llmtrain/core/log.hpp"
#include "llmtrain/core/stop_signal.hpp"
#include "llmtrain/data/tokenizer_encoder.hpp"
#include "llmtrain/dist/collectives.hpp"
#include "llmtrain/dist/spmd_main.hpp"
#include "llmtrain/model/blas_runtime.hpp"
#include "llmtrain/tokenizer/tokenizer.hpp"
#include "llmtrain/train/trainer.hpp"
#include "run_setup.hpp"

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
    "      --set KEY=VALUE   override one configuration key (repeatable; the last one wins), checked like\n"
    "                        the file; relative paths resolve against the working directory:\n"
    "                          --set train.steps=7 --set train.lr=3e-4 --set parallel.backend=mpi\n"
    "                          --set train.run_dir=runs/r2 --set model.tie_embeddings=true\n"
    "                          --set data.datasets.kjv.weight=2     (a dataset by its name)\n"
    "                          --set 'data.datasets.\"web.en\".weight=0.5'   (a name with a dot, quoted)\n"
    "      --config-reference  print the configuration reference (docs/config.md) and exit\n"
    "\n"
    "Configuration keys: docs/config.md. Design: docs/architecture.md.\n";

struct Options {
  bool dry_run = false;
  std::string config_path;
  std::vector<std::string> overrides;  // --set section.key=value, in order
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
    } else if (arg == "--set") {
      if (i + 1 == argc) {
        std::fprintf(stderr, "llmtrain: --set needs a value: --set section.key=value\n\n%s", kUsage);
        std::exit(2);
      }
      options.overrides.push_back(argv[++i]);
    } else if (arg.rfind("--set=", 0) == 0) {
      options.overrides.push_back(arg.substr(6));
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
  dist::agree(runtime, [&] { config = load_config(options.config_path, options.overrides); });
  std::shared_ptr<const data::TokenizerEncoder> encoder;
  ModelConfig model_shape;
  dist::agree(runtime, [&] {
    encoder = std::make_shared<data::TokenizerEncoder>(tokenizer::Tokenizer::load(config.tokenizer.path));
    model_shape = apps::model_config(config, static_cast<std::int64_t>(encoder->tokenizer().vocab_size()));
  });

  if (options.dry_run) {
    if (runtime.rank() == 0)
      std::printf("# llmtrain %s: resolved configuration of %s (%d ranks on %d nodes)\n\n%s%s", LLMTRAIN_VERSION,
                  config.source_file.c_str(), runtime.size(), runtime.node_count(), to_toml(config).c_str(),
                  apps::dry_run_report(config, model_shape, runtime.size()).c_str());
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
  log_info("BLAS kernels: ", model::blas_kernel_name());
  model::set_blas_threads(1);  // one rank per core: BLAS threads would only compete with other ranks

  auto collectives = dist::make_collectives(config.parallel.backend, runtime);
  log_info("tensor collectives over ", collectives->name());

  // Each rank streams its own logical shards; nothing is read before the first batch.
  std::unique_ptr<data::Loader> train_data, eval_data;
  dist::agree(runtime, [&] {
    const data::LoaderOptions train_options =
        apps::loader_options(config, config.data.datasets, encoder->tokenizer(), runtime.local_size());
    if (!train_options.bos_id && !train_options.eos_id)
      log_warn("the tokenizer frames documents with no BOS or EOS token: documents are packed without separators "
               "(set tokenizer.eos_token)");
    train_data = std::make_unique<data::Loader>(train_options, encoder, runtime.rank(), runtime.size());
    if (!config.data.eval_datasets.empty())
      eval_data = std::make_unique<data::Loader>(
          apps::loader_options(config, config.data.eval_datasets, encoder->tokenizer(), runtime.local_size()),
          encoder, runtime.rank(), runtime.size());
  });

  Kokkos::ScopeGuard kokkos;
  train::Trainer trainer(model_shape, apps::train_options(config), *collectives);
  log_info("model: ", model_shape.parameter_count(), " parameters; ", config.train.steps, " steps of ",
           config.train.batch_size * config.data.seq_len * config.train.grad_accum * runtime.size(), " tokens");
  trainer.run(*train_data, eval_data.get());
  if (trainer.stopped_by_signal())
    log_info("stopped by ", stop_signal_number() ? cat("signal ", stop_signal_number()) : "a stop signal to another rank",
             " after step ", trainer.step(), " of ", config.train.steps,
             " (checkpoints are the next milestone: this run cannot be resumed yet)");
  else
    log_info("done: ", trainer.step(), " steps; metrics in ", config.train.run_dir, "/metrics.jsonl");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  llmtrain::model::ensure_fast_blas_kernels(argv);  // may re-execute the program: before anything else
  const Options options = parse_arguments(argc, argv);
  return llmtrain::dist::run_spmd(argc, argv, [&](llmtrain::dist::Runtime& runtime) { return run_job(options, runtime); });
}
