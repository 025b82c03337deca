// The training loop (see trainer.hpp): micro-batches -> gradient reduction -> clip -> AdamW -> hooks.
#include "llmtrain/train/trainer.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "llmtrain/core/error.hpp"
#include "llmtrain/core/log.hpp"
#include "llmtrain/core/timer.hpp"
#include "llmtrain/model/fenced_seconds.hpp"
#include "llmtrain/model/gemm.hpp"
#include "llmtrain/optim/grad_clip.hpp"
#include "llmtrain/parallel/memory_tracker.hpp"

namespace llmtrain::train {

Trainer::Trainer(const TrainOptions& options, model::Model<float>& model, parallel::ParamStore& store,
                 optim::AdamW& optimizer, dist::Collectives& comm)
    : options_(options), model_(model), store_(store), optimizer_(optimizer), comm_(comm) {
  LLMTRAIN_CHECK(options_.steps > 0, "train.steps must be positive, got ", options_.steps);
  LLMTRAIN_CHECK(options_.grad_accum > 0, "train.grad_accum must be positive, got ", options_.grad_accum);
  LLMTRAIN_CHECK(options_.grad_clip >= 0, "train.grad_clip must be >= 0, got ", options_.grad_clip);
  LLMTRAIN_CHECK(options_.schedule.warmup_steps >= 0, "train.warmup_steps must be >= 0, got ",
                 options_.schedule.warmup_steps);
  options_.schedule.total_steps = options_.steps;
}

void Trainer::add_hook(StepHook& hook) { hooks_.push_back(&hook); }

void Trainer::request_stop(bool by_signal) {
  stop_ = true;
  stop_by_signal_ = stop_by_signal_ || by_signal;
}

StepMetrics Trainer::train_step(BatchSource& source) {
  const model::GemmStats gemm_before = model::gemm_stats();
  const Stopwatch step_watch;
  StepMetrics m;
  parallel::take_peak_bytes();
  model_.backend().take_peak_bytes();
  store_.take_comm_times();
  store_.zero_gradients();
  double sums[3] = {0, 0, 0};  // loss sum, counted targets, tokens: agreed over ranks below
  std::int64_t seq_len = 0;
  for (std::int64_t micro = 0; micro < options_.grad_accum; ++micro) {
    const Stopwatch wait_watch;
    source.next_into(batch_);
    const Batch& batch = batch_;
    m.data_wait_s += wait_watch.seconds();
    store_.begin_micro_batch(micro + 1 == options_.grad_accum);
    const model::LossSum loss = model_.forward_backward(batch, 1.0 / double(options_.grad_accum));
    m.forward_s += model_.last_pass_times().forward_s;
    m.backward_s += model_.last_pass_times().backward_s;
    sums[0] += loss.sum;
    sums[1] += double(loss.count);
    sums[2] += double(batch.rows * batch.seq_len);
    seq_len = batch.seq_len;
  }
  const Stopwatch optimizer_watch;
  store_.reduce_gradients();
  comm_.agree_sum(sums, 3);
  m.grad_norm = store_.grad_norm();
  // Every rank sees the same agreed loss and norm, so every rank stops here together.
  LLMTRAIN_CHECK(std::isfinite(sums[0]) && std::isfinite(m.grad_norm), "training diverged at step ", step_ + 1,
                 ": loss sum ", sums[0], ", gradient norm ", m.grad_norm,
                 " (lower train.lr, raise train.warmup_steps or set train.grad_clip)");
  m.lr = optim::learning_rate(options_.schedule, step_);
  // When another step follows, the store may start its first gathers as soon as their units are updated.
  std::function<void(int)> updated;
  if (step_ + 1 < options_.steps) updated = [this](int unit) { store_.shard_updated(unit); };
  optimizer_.step(store_.param_shards(), store_.grad_shards(), m.lr, optim::clip_factor(m.grad_norm, options_.grad_clip),
                  updated);
  m.optimizer_s = model::fenced_seconds(optimizer_watch);
  ++step_;
  m.step = step_;
  m.loss = sums[1] > 0 ? sums[0] / sums[1] : 0.0;
  m.tokens = std::int64_t(sums[2]);
  tokens_seen_ += m.tokens;
  m.tokens_seen = tokens_seen_;
  m.step_s = step_watch.seconds();
  m.shard_bytes = store_.shard_bytes();
  m.peak_bytes = parallel::take_peak_bytes();
  // The host backend's memory is counted in peak_bytes already (the process's tracker).
  const std::int64_t backend_peak = model_.backend().take_peak_bytes();
  if (model_.backend().device() == model::Device::Cuda) m.device_peak_bytes = backend_peak;
  const parallel::CommTimes comm = store_.take_comm_times();
  m.gather_s = comm.gather_s;
  m.reduce_s = comm.reduce_s;
  m.exposed_s = comm.exposed_s;
  m.gather_wait_s = comm.gather_wait_s;
  m.gather_bytes = comm.gather_bytes;
  m.reduce_bytes = comm.reduce_bytes;
  m.tokens_per_s = double(m.tokens) / m.step_s;
  if (options_.peak_flops > 0) {
    const double model_flops = model_.config().train_flops(m.tokens, seq_len);
    raise_peak_to_measured(model_flops / (m.step_s * double(comm_.size())), gemm_before);
    m.mfu = model_flops / (m.step_s * options_.peak_flops * double(comm_.size()));
  }
  return m;
}

void Trainer::raise_peak_to_measured(double step_rate, const model::GemmStats& gemm_before) {
  // What this rank's BLAS calls achieved during the step, and the step's model flop rate per rank: a peak
  // below either was measured low (a noisy probe on a busy machine) and would put MFU above 100 %.
  const model::GemmStats gemm_now = model::gemm_stats();
  const double gemm_seconds = gemm_now.seconds - gemm_before.seconds;
  const double gemm_rate = gemm_seconds > 0 ? (gemm_now.flops - gemm_before.flops) / gemm_seconds : 0.0;
  const double measured = std::max(gemm_rate, step_rate);
  if (measured <= options_.peak_flops) return;
  if (!peak_raised_)  // once: later raises are the same story
    log_warn("MFU: step ", step_, " ran at ", measured / 1e9, " GFLOP/s per rank, above the sgemm peak measured ",
             "at start-up (", options_.peak_flops / 1e9, " GFLOP/s); MFU is reported against the fastest step ",
             "from now on");
  peak_raised_ = true;
  options_.peak_flops = measured;
}

EvalResult Trainer::evaluate(const std::vector<Batch>& batches) {
  double sums[2] = {0, 0};
  for (const auto& batch : batches) {
    const model::LossSum loss = model_.forward(batch);
    sums[0] += loss.sum;
    sums[1] += double(loss.count);
  }
  comm_.agree_sum(sums, 2);
  EvalResult result;
  result.tokens = std::int64_t(sums[1]);
  result.loss = sums[1] > 0 ? sums[0] / sums[1] : 0.0;
  result.perplexity = std::exp(result.loss);
  return result;
}

std::vector<StepMetrics> Trainer::run(BatchSource& train) {
  std::vector<StepMetrics> history;
  while (step_ < options_.steps && !stop_) {
    history.push_back(train_step(train));
    for (StepHook* hook : hooks_) hook->after_step(*this, history.back());
  }
  for (StepHook* hook : hooks_) hook->after_run(*this);
  return history;
}

}  // namespace llmtrain::train
