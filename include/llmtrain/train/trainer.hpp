// The training loop: batches in, optimizer steps out.
//
// One step = grad_accum micro-batches (forward + backward into the store's gradients, each weighted
// 1/grad_accum), the store's gradient reduction across ranks, clipping by the global norm, an AdamW
// update of this rank's parameter ranges at the scheduled learning rate, and one host-side agreement on
// the step's loss and token count. The trainer builds nothing: the job hands it the model, the parameter
// store, the optimizer and the communicator. Work between steps (stop agreement, metrics, evaluation,
// provenance, checkpoints) is a list of hooks run after every step, in the order they were added.
#pragma once

#include <cstdint>
#include <vector>

#include "llmtrain/core/batch.hpp"
#include "llmtrain/dist/collectives.hpp"
#include "llmtrain/model/gemm.hpp"
#include "llmtrain/model/model.hpp"
#include "llmtrain/optim/adamw.hpp"
#include "llmtrain/optim/schedule.hpp"
#include "llmtrain/parallel/param_store.hpp"
#include "llmtrain/train/metrics.hpp"

namespace llmtrain::train {

struct TrainOptions {
  std::int64_t steps = 100;         // optimizer steps of the whole run
  std::int64_t grad_accum = 1;      // micro-batches per optimizer step and rank
  double grad_clip = 1.0;           // max global gradient norm; 0 disables clipping
  optim::ScheduleOptions schedule;  // total_steps is set from `steps`
  double peak_flops = 0;            // per-rank flop/s, the MFU denominator; 0: MFU not reported. Raised to
                                    // what a step achieved if that is higher, so MFU never exceeds 1
};

struct EvalResult {
  double loss = 0;
  double perplexity = 0;
  std::int64_t tokens = 0;
};

class Trainer;

// Work that happens between steps. after_step runs on every rank after every step, after_run once when
// the loop ends (by steps or by an agreed stop).
class StepHook {
 public:
  virtual ~StepHook() = default;
  virtual void after_step(Trainer& trainer, const StepMetrics& metrics) = 0;
  virtual void after_run(Trainer& trainer) { (void)trainer; }
};

class Trainer {
 public:
  // Every part must outlive the trainer. comm spans every rank of the run.
  Trainer(const TrainOptions& options, model::Model<float>& model, parallel::ParamStore& store,
          optim::AdamW& optimizer, dist::Collectives& comm);

  void add_hook(StepHook& hook);

  model::Model<float>& model() { return model_; }
  parallel::ParamStore& store() { return store_; }
  dist::Collectives& comm() { return comm_; }
  const TrainOptions& options() const { return options_; }
  std::int64_t step() const { return step_; }  // optimizer steps done
  std::int64_t tokens_seen() const { return tokens_seen_; }  // training tokens of those steps, all ranks
  // A resumed run: `step` steps over `tokens_seen` tokens were done before (the schedule and the metrics
  // continue from step + 1, the token count from tokens_seen).
  void resume_at(std::int64_t step, std::int64_t tokens_seen) {
    step_ = step;
    tokens_seen_ = tokens_seen;
  }

  // Ends the loop after the current step. Hooks call it with an agreed decision (every rank together).
  void request_stop(bool by_signal);
  bool stop_requested() const { return stop_; }
  bool stopped_by_signal() const { return stop_by_signal_; }

  // One optimizer step from grad_accum batches of `source`. Collective.
  StepMetrics train_step(BatchSource& source);
  // Mean loss over `batches` on every rank together (collective).
  EvalResult evaluate(const std::vector<Batch>& batches);
  // Steps until options.steps or an agreed stop, running the hooks after each. Returns the metrics of every
  // step taken.
  std::vector<StepMetrics> run(BatchSource& train);

 private:
  void raise_peak_to_measured(double step_rate, const model::GemmStats& gemm_before);

  TrainOptions options_;
  model::Model<float>& model_;
  parallel::ParamStore& store_;
  optim::AdamW& optimizer_;
  dist::Collectives& comm_;
  std::vector<StepHook*> hooks_;
  std::int64_t step_ = 0, tokens_seen_ = 0;
  bool stop_ = false, stop_by_signal_ = false;
  bool peak_raised_ = false;
  Batch batch_;  // the micro-batch being trained on; the next one is taken into its storage (next_into)
};

}  // namespace llmtrain::train
