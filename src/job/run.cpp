// `llmtrain input.toml`: configuration, logging and signals, then the job (see job.hpp).
#include <Kokkos_Core.hpp>
#include <cstdio>
#include <filesystem>

#include "dry_run_report.hpp"
#include "llmtrain/core/log.hpp"
#include "llmtrain/core/stop_signal.hpp"
#include "llmtrain/data/tokenizer_encoder.hpp"
#include "llmtrain/dist/spmd_main.hpp"
#include "llmtrain/job/job.hpp"
#include "llmtrain/job/options.hpp"
#include "llmtrain/model/blas_runtime.hpp"
#include "llmtrain/model/gemm.hpp"
#include "llmtrain/model/kernels_isa.hpp"

namespace llmtrain::job {
namespace {

void print_dry_run(const Config& config, dist::Runtime& runtime) {
  ModelConfig model;
  dist::agree(runtime, [&] {
    const auto tokenizer = tokenizer::Tokenizer::load(config.tokenizer.path);
    model = model_config(config, std::int64_t(tokenizer.vocab_size()));
  });
  if (runtime.rank() == 0)
    std::printf("# llmtrain %s: resolved configuration of %s (%d ranks on %d nodes)\n\n%s%s", LLMTRAIN_VERSION,
                config.source_file.c_str(), runtime.size(), runtime.node_count(), to_toml(config).c_str(),
                dry_run_report(config, model, runtime.size()).c_str());
}

void set_up_logging(const Config& config, dist::Runtime& runtime) {
  std::string per_rank_log;
  if (config.log.per_rank) {
    const std::string dir = config.log.dir.empty() ? config.train.run_dir : config.log.dir;
    dist::agree(runtime, [&] { std::filesystem::create_directories(dir); });
    per_rank_log = dir + "/rank-" + std::to_string(runtime.rank()) + ".log";
  }
  dist::agree(runtime, [&] { configure_logging(runtime.rank(), parse_log_level(config.log.level), per_rank_log); });
}

}  // namespace

int run_llmtrain(const std::string& config_path, const std::vector<std::string>& overrides, bool dry_run,
                 dist::Runtime& runtime) {
  Config config;
  dist::agree(runtime, [&] { config = load_config(config_path, overrides); });
  if (dry_run) {
    print_dry_run(config, runtime);
    return 0;
  }
  set_up_logging(config, runtime);
  install_stop_signal_handlers();
  log_info("llmtrain ", LLMTRAIN_VERSION, ": ", runtime.size(), " ranks on ", runtime.node_count(),
           " nodes, configuration ", config.source_file);
  log_info("kernels: BLAS ", model::blas_kernel_name(), ", element-wise ", model::elementwise_isa(), ", bf16 products ",
           model::bf16_supported() ? "AVX512_BF16" : "not supported by this CPU");
  model::set_blas_threads(1);  // one rank per core: BLAS threads would only compete with other ranks

  Kokkos::ScopeGuard kokkos;
  Job job(config, runtime);
  const ModelConfig& model = job.model_config();
  log_info("model: ", model.parameter_count(), " parameters; ", config.train.steps, " steps of ",
           config.train.batch_size * config.data.seq_len * config.train.grad_accum * runtime.size(), " tokens");
  job.run();
  const train::Trainer& trainer = job.trainer();
  if (trainer.stopped_by_signal())
    log_info("stopped by ", stop_signal_number() ? cat("signal ", stop_signal_number()) : "a stop signal to another rank",
             " after step ", trainer.step(), " of ", config.train.steps,
             " (checkpoints are the next milestone: this run cannot be resumed yet)");
  else
    log_info("done: ", trainer.step(), " steps; metrics in ", config.train.run_dir, "/metrics.jsonl");
  return 0;
}

}  // namespace llmtrain::job
