// Per-step training metrics: the JSON line in <run_dir>/metrics.jsonl and rank 0's progress line.
#pragma once

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>

namespace llmtrain::train {

// What checkpointing cost the training loop at a step: seconds it waited for a checkpoint write (the previous
// write still in flight when asynchronous; the whole write when synchronous) and seconds it spent copying a
// snapshot into the staging buffers (asynchronous only). 0 at steps without a checkpoint.
struct CheckpointCost {
  double blocked_s = 0;
  double snapshot_s = 0;
};

// A run relaunched after a failure (the job scripts relaunch inside the allocation; docs/checkpoints.md):
// steps lost (logged before the failure, after the state it resumed from) and seconds from the failure to
// the end of its first step, and the failure's time (seconds since the epoch, as the script noted it). On that
// step's metrics line.
struct Recovery {
  std::int64_t lost_steps = 0;
  double seconds = 0;
  double failed_at_unix_s = 0;
};

struct StepMetrics {
  std::int64_t step = 0;          // 1-based optimizer step
  double loss = 0;                // mean over all ranks' counted targets of this step
  double lr = 0;
  double grad_norm = 0;           // before clipping
  double tokens_per_s = 0;        // all ranks together
  double mfu = 0;                 // model flops / (step time * peak flop/s of all ranks)
  std::int64_t tokens = 0;        // tokens of this step, all ranks
  std::int64_t tokens_seen = 0;   // tokens of every step so far, all ranks (a resumed run's earlier steps too)
  double data_wait_s = 0, forward_s = 0, backward_s = 0, optimizer_s = 0;  // incl. all-reduce in optimizer
  double step_s = 0;
  // This rank's: parameter + gradient + AdamW bytes of its ranges, peak bytes of all Kokkos allocations in
  // the step (parallel/memory_tracker.hpp), peak bytes allocated on its CUDA device in the step (0 on the
  // CPU, and until the device training step of issue 28 fills it), and seconds with a gather / a reduction in
  // flight and with compute blocked waiting for one (gather_wait_s: for a gather), and the bytes it sent plus
  // received in parameter gathers / gradient reductions (parallel::CommTimes says how they are counted).
  std::int64_t shard_bytes = 0, peak_bytes = 0, device_peak_bytes = 0;
  double gather_s = 0, reduce_s = 0, exposed_s = 0, gather_wait_s = 0;
  std::int64_t gather_bytes = 0, reduce_bytes = 0;
  std::optional<CheckpointCost> ckpt;  // in a run that writes checkpoints, on every line
  std::optional<Recovery> recovery;    // on the first line of a relaunched run
};

// Writes JSON lines to <run_dir>/metrics.jsonl, which holds the current run only (run_files.hpp); prints
// progress lines to stdout.
class MetricsLog {
 public:
  explicit MetricsLog(const std::string& run_dir);  // empty run_dir: progress lines only; opens nothing yet
  // Opens the file for a run that starts after `step` optimizer steps (creating run_dir): 0 is a new run,
  // which first moves an earlier run's file aside to metrics.<time>.jsonl; N > 0 is a run resumed from a
  // checkpoint at step N, which drops the lines logged after step N and appends. Both say what they did.
  void start(std::int64_t step);
  void write_step(const StepMetrics& m);
  void write_eval(std::int64_t step, double loss, double perplexity, std::int64_t tokens);
  // The progress line, with the time left at the pace of this process: elapsed_s over the steps_taken
  // since it started (a resumed run started after its checkpoint's step).
  void progress(const StepMetrics& m, std::int64_t total_steps, double elapsed_s, std::int64_t steps_taken);

 private:
  std::string run_dir_;
  std::ofstream out_;
};

// Seconds until the last step at the pace so far: elapsed_s for steps_taken steps, steps_left to go.
double eta_seconds(double elapsed_s, std::int64_t steps_taken, std::int64_t steps_left);

}  // namespace llmtrain::train
