// metrics.jsonl lines and the progress line.
#include "llmtrain/train/metrics.hpp"

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "llmtrain/core/error.hpp"
#include "llmtrain/core/log.hpp"
#include "llmtrain/train/run_files.hpp"

namespace llmtrain::train {

MetricsLog::MetricsLog(const std::string& run_dir) : run_dir_(run_dir) {}

void MetricsLog::start(std::int64_t step) {
  if (run_dir_.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(run_dir_, ec);
  LLMTRAIN_CHECK(!ec, "cannot create run directory '", run_dir_, "': ", ec.message());
  const std::string path = (std::filesystem::path(run_dir_) / "metrics.jsonl").string();
  if (step == 0) {
    const std::string moved = set_aside(path);
    if (!moved.empty()) log_info("metrics: a new run; the previous run's ", path, " was moved to ", moved);
  } else {
    const KeptLines lines = keep_steps_up_to(path, step);
    log_info("metrics: resuming after step ", step, ": ", path, " keeps ", lines.kept, " lines, dropped ",
             lines.dropped, " logged after that step");
  }
  out_.open(path, std::ios::app);
  LLMTRAIN_CHECK(out_.good(), "cannot open '", path, "' for appending");
}

void MetricsLog::write_step(const StepMetrics& m) {
  if (run_dir_.empty()) return;
  LLMTRAIN_CHECK(out_.is_open(), "metrics.jsonl written before MetricsLog::start()");
  nlohmann::json j = {{"type", "train"},
                      {"step", m.step},
                      {"loss", m.loss},
                      {"lr", m.lr},
                      {"grad_norm", m.grad_norm},
                      {"tokens", m.tokens},
                      {"tokens_seen", m.tokens_seen},
                      {"tokens_per_s", m.tokens_per_s},
                      {"mfu", m.mfu},
                      {"time_s",
                       {{"data_wait", m.data_wait_s},
                        {"forward", m.forward_s},
                        {"backward", m.backward_s},
                        {"optimizer", m.optimizer_s},
                        {"step", m.step_s}}},
                      {"mem", {{"shard_bytes", m.shard_bytes}, {"peak_bytes", m.peak_bytes},
                               {"device_peak_bytes", m.device_peak_bytes}}},
                      {"comm", {{"gather_s", m.gather_s}, {"reduce_s", m.reduce_s}, {"exposed_s", m.exposed_s},
                                {"gather_wait_s", m.gather_wait_s}, {"gather_bytes", m.gather_bytes},
                                {"reduce_bytes", m.reduce_bytes}}}};
  if (m.ckpt) j["ckpt"] = {{"blocked_s", m.ckpt->blocked_s}, {"snapshot_s", m.ckpt->snapshot_s}};
  if (m.recovery)
    j["recovery"] = {{"lost_steps", m.recovery->lost_steps}, {"seconds", m.recovery->seconds},
                     {"failed_at", m.recovery->failed_at_unix_s}};
  out_ << j.dump() << '\n';
  out_.flush();
  LLMTRAIN_CHECK(out_.good(), "writing metrics.jsonl failed at step ", m.step);
}

void MetricsLog::write_eval(std::int64_t step, double loss, double perplexity, std::int64_t tokens) {
  if (run_dir_.empty()) return;
  LLMTRAIN_CHECK(out_.is_open(), "metrics.jsonl written before MetricsLog::start()");
  nlohmann::json j = {{"type", "eval"}, {"step", step}, {"eval_loss", loss}, {"eval_perplexity", perplexity},
                      {"eval_tokens", tokens}};
  out_ << j.dump() << '\n';
  out_.flush();
  LLMTRAIN_CHECK(out_.good(), "writing metrics.jsonl failed at eval of step ", step);
}

double eta_seconds(double elapsed_s, std::int64_t steps_taken, std::int64_t steps_left) {
  if (steps_taken <= 0) return 0;
  return elapsed_s / double(steps_taken) * double(steps_left);
}

void MetricsLog::progress(const StepMetrics& m, std::int64_t total_steps, double elapsed_s, std::int64_t steps_taken) {
  const long eta_s = long(eta_seconds(elapsed_s, steps_taken, total_steps - m.step));
  std::printf("step %lld/%lld | loss %.4f | lr %.2e | grad norm %.3f | %.0f tok/s | mfu %.1f%% | eta %02ld:%02ld:%02ld\n",
              static_cast<long long>(m.step), static_cast<long long>(total_steps), m.loss, m.lr, m.grad_norm,
              m.tokens_per_s, 100.0 * m.mfu, eta_s / 3600, eta_s / 60 % 60, eta_s % 60);
  std::fflush(stdout);
}

}  // namespace llmtrain::train
