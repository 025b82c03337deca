// `llmtrain input.toml`: configuration and logging, then the job (see job.hpp). The stop-signal handlers
// are installed by main() before MPI starts.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "device_choice.hpp"
#include "dry_run_report.hpp"
#include "memory_check.hpp"
#include "storage_check.hpp"
#include "llmtrain/core/counted.hpp"
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

// The dry run's device lines: train.device as a run here would resolve it on rank 0 (or the error it would stop
// with), and where that is cuda, or cuda was asked for, the device memory estimate with what this rank's
// device has free (without a device here, the estimate alone).
std::string device_report(const Config& config, const ModelConfig& model, int planned, const dist::DeviceQuery& seen,
                          const std::string& host) {
  std::string out;
  bool on_device = config.train.device == "cuda";
  try {
    const DeviceChoice choice = resolve_device(config.train.device, seen, device_training_available(),
                                               device_unsupported(config));
    out += cat("device: ", choice.name(), " (", choice.why, ")\n");
    on_device = on_device || choice.device == Device::cuda;
  } catch (const Error& e) {
    out += cat("device: a run here stops: ", e.what(), "\n");
  }
  if (!on_device) return out;
  out += device_memory_report(config, model, planned);
  if (!seen.has_device())
    return out + cat("  available on the device here: no CUDA device for this rank (",
                     counted(seen.device_count, "CUDA device"), ", ", counted(seen.local_ranks, "rank"),
                     " on this node): the estimate is not compared\n");
  return out + cat("  available on the device here: ", device_available_memory(seen, host).described(),
                   "; a run refuses to start above it unless train.check_memory = false\n");
}

void print_dry_run(const Config& config, dist::Runtime& runtime, int world_size) {
  ModelConfig model;
  dist::agree(runtime, [&] {
    const auto tokenizer = load_tokenizer(config);
    model = model_config(config, std::int64_t(tokenizer.vocab_size()));
  });
  if (runtime.rank() != 0) return;
  // What the memory check of a real run on this host would compare the estimate with.
  const AvailableMemory available = available_memory(runtime.hostname(), runtime.local_size());
  const int planned = world_size > 0 ? world_size : runtime.size();
  const dist::DeviceQuery seen = devices_seen(config, runtime);
  std::printf("# llmtrain %s: resolved configuration of %s (%s on %s)\n\n%s%s"
              "  available here: %s; a run refuses to start above it unless train.check_memory = false\n%s",
              LLMTRAIN_VERSION, config.source_file.c_str(), counted(runtime.size(), "rank").c_str(),
              counted(runtime.node_count(), "node").c_str(), to_toml(config).c_str(),
              dry_run_report(config, model, planned).c_str(),
              available_here(available, planned, runtime.size()).c_str(),
              device_report(config, model, planned, seen, runtime.hostname()).c_str());
}

void set_up_logging(const Config& config, dist::Runtime& runtime) {
  std::string per_rank_log;
  if (config.log.per_rank) {
    const std::string dir = config.log.dir.empty() ? config.train.run_dir : config.log.dir;
    dist::agree(runtime, [&] {
      CheckResult result;
      if (check_writable_dir(config.log.dir.empty() ? "train.run_dir" : "log.dir", dir, result) < 0)
        LLMTRAIN_FAIL(result.problems.front());
    });
    per_rank_log = dir + "/rank-" + std::to_string(runtime.rank()) + ".log";
  }
  dist::agree(runtime, [&] { configure_logging(runtime.rank(), parse_log_level(config.log.level), per_rank_log); });
}

// The end-of-run data report: how many bad records were skipped, and where (most first).
void report_skipped_records(const std::map<std::string, std::uint64_t>& skipped) {
  if (skipped.empty()) {
    log_info("data: no bad records skipped");
    return;
  }
  std::vector<std::pair<std::uint64_t, std::string>> by_count;
  std::uint64_t total = 0;
  for (const auto& [file, count] : skipped) {
    by_count.emplace_back(count, file);
    total += count;
  }
  std::sort(by_count.begin(), by_count.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  constexpr std::size_t kListed = 10;
  std::string files;
  for (std::size_t i = 0; i < std::min(by_count.size(), kListed); ++i)
    files += cat(i ? ", " : "", by_count[i].second, " (", by_count[i].first, ")");
  if (by_count.size() > kListed) files += cat(" and ", by_count.size() - kListed, " more files");
  log_warn("data: skipped ", counted(total, "bad record"), " (data.on_bad_record = \"skip\") in ",
           counted(skipped.size(), "file"), ": ", files);
}

}  // namespace

int run_llmtrain(const std::string& config_path, const std::vector<std::string>& overrides, bool dry_run,
                 dist::Runtime& runtime, int dry_run_world_size) {
  Config config;
  dist::agree(runtime, [&] { config = load_config(config_path, overrides); });
  if (dry_run) {
    print_dry_run(config, runtime, dry_run_world_size);
    return 0;
  }
  set_up_logging(config, runtime);
  log_info("llmtrain ", LLMTRAIN_VERSION, ": ", counted(runtime.size(), "rank"), " on ",
           counted(runtime.node_count(), "node"), ", configuration ", config.source_file);
  log_info("kernels: BLAS ", model::blas_kernel_name(), ", element-wise ", model::elementwise_isa(), ", bf16 products ",
           model::bf16_supported() ? "AVX512_BF16" : "not supported by this CPU");
  model::set_blas_threads(1);  // one rank per core: BLAS threads would only compete with other ranks

  Kokkos::ScopeGuard kokkos;
  Job job(config, runtime);
  // Run again after it finished (a job script that always reruns): nothing to train, evaluate or append.
  if (!job.resumed_from().empty() && job.trainer().step() >= config.train.steps) {
    log_info("the run is already complete: ", job.resumed_from(), " is at step ", job.trainer().step(),
             " (train.steps = ", config.train.steps, "); nothing to do (raise train.steps to train further)");
    return 0;
  }
  const ModelConfig& model = job.model_config();
  log_info("model: ", model.parameter_count(), " parameters; ", config.train.steps, " steps of ",
           config.train.batch_size * config.data.seq_len * config.train.grad_accum * runtime.size(), " tokens");
  job.run();
  report_skipped_records(job.skipped_records());
  const train::Trainer& trainer = job.trainer();
  if (trainer.stopped_by_signal())
    log_info("stopped by ", stop_signal_number() ? signal_name(stop_signal_number()) : "a stop signal to another rank",
             " after step ", trainer.step(), " of ", config.train.steps,
             config.checkpoint.dir.empty() ? " (no checkpoint.dir: this run cannot be resumed)"
                                           : " (resume: run the same command again)",
             // Open MPI's mpirun turns Ctrl-C or a SIGTERM of its own into SIGTERM to the ranks, and exits 1
             // however cleanly they stopped (it cannot forward SIGINT).
             stop_signal_number() == SIGTERM && std::getenv("OMPI_MCA_orte_hnp_uri")
                 ? "; mpirun exits 1 after this clean stop all the same: send mpirun SIGUSR1 to stop with status 0"
                 : "");
  else
    log_info("done: ", trainer.step(), " steps; metrics in ", config.train.run_dir, "/metrics.jsonl");
  return 0;
}

}  // namespace llmtrain::job
