// The training loop: batches in, optimizer steps out, one metrics line per step.
//
// One step = grad_accum micro-batches (forward + backward, gradients summed with weight 1/grad_accum),
// an all-reduce (mean) of every gradient unit across ranks, clipping by global norm, an AdamW update at
// the scheduled learning rate. Each rank reads its own part of the data through its own BatchSource; the
// ranks keep identical replicas of the model (until the FSDP layer shards them). Rank 0 appends a JSON
// line per step to <run_dir>/metrics.jsonl and prints a progress line with ETA.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "llmtrain/core/batch.hpp"
#include "llmtrain/dist/collectives.hpp"
#include "llmtrain/model/model.hpp"
#include "llmtrain/optim/adamw.hpp"
#include "llmtrain/optim/schedule.hpp"
#include "llmtrain/train/metrics.hpp"

namespace llmtrain::train {

struct TrainOptions {
  std::int64_t steps = 100;            // optimizer steps of the whole run
  std::int64_t grad_accum = 1;         // micro-batches per optimizer step and rank
  double grad_clip = 1.0;              // max global gradient norm; 0 disables clipping
  std::string recompute = "none";      // "none" | "blocks"
  optim::AdamWOptions adamw;
  optim::ScheduleOptions schedule;     // total_steps is set from `steps`
  std::int64_t eval_every = 0;         // steps between evaluations (0: only at the end, if an eval source is given)
  std::int64_t eval_batches = 8;       // batches per evaluation and rank
  std::string run_dir;                 // metrics.jsonl goes here (rank 0); empty: no file
  std::int64_t progress_every = 1;     // steps between rank 0 progress lines; 0: none
  double peak_flops = 0;               // per-rank flop/s for MFU; 0: measure sgemm at start
};

struct EvalResult {
  double loss = 0;
  double perplexity = 0;
  std::int64_t tokens = 0;
};

class Trainer {
 public:
  Trainer(const ModelConfig& model_config, const TrainOptions& options, dist::Collectives& collectives);

  model::Model<float>& model() { return model_; }
  optim::AdamW& optimizer() { return optimizer_; }
  std::int64_t step() const { return step_; }  // optimizer steps done
  // True once the ranks agreed to stop (a stop signal reached any of them): run() returns after that step.
  bool stopped_by_signal() const { return stop_agreed_; }

  // One optimizer step from grad_accum batches of `source`; returns the step's metrics (also written).
  StepMetrics train_step(BatchSource& source);
  // Mean loss over eval_batches batches on every rank (collective). The batches are drawn from `source`
  // at the first call and reused by every later call, so evaluations of one run score the same tokens.
  EvalResult evaluate(BatchSource& source);
  // Steps until options.steps or a stop signal; a signal on any rank is agreed in the all-reduce of the
  // step in progress (or of the next one), so all ranks stop after the same step. Evaluates every eval_every steps
  // and at the end when `eval` is given. Returns the metrics of every step taken.
  std::vector<StepMetrics> run(BatchSource& train, BatchSource* eval);

 private:
  TrainOptions options_;
  dist::Collectives& comm_;
  model::Model<float> model_;
  optim::AdamW optimizer_;
  std::int64_t step_ = 0;
  bool stop_agreed_ = false;
  double peak_flops_ = 0;
  std::unique_ptr<MetricsLog> log_;  // rank 0 only
  std::vector<Batch> eval_batches_;
};

}  // namespace llmtrain::train
