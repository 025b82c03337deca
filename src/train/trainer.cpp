// The training loop (see trainer.hpp): micro-batches -> gradient all-reduce -> clip -> AdamW -> metrics.
#include "llmtrain/train/trainer.hpp"

#include <chrono>
#include <cmath>
#include <vector>

#include "llmtrain/core/error.hpp"
#include "llmtrain/core/stop_signal.hpp"
#include "llmtrain/model/gemm.hpp"
#include "llmtrain/optim/grad_clip.hpp"

namespace llmtrain::train {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  Kokkos::fence();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

Trainer::Trainer(const ModelConfig& model_config, const TrainOptions& options, dist::Collectives& collectives)
    : options_(options),
      comm_(collectives),
      model_(model_config, model::parse_recompute(options.recompute)),
      optimizer_(model::unit_layouts(model_config), options.adamw) {
  LLMTRAIN_CHECK(options_.steps > 0, "train.steps must be positive, got ", options_.steps);
  LLMTRAIN_CHECK(options_.grad_accum > 0, "train.grad_accum must be positive, got ", options_.grad_accum);
  LLMTRAIN_CHECK(options_.grad_clip >= 0, "train.grad_clip must be >= 0, got ", options_.grad_clip);
  LLMTRAIN_CHECK(options_.eval_every >= 0, "train.eval_every must be >= 0, got ", options_.eval_every);
  LLMTRAIN_CHECK(options_.eval_batches > 0, "train.eval_batches must be positive, got ", options_.eval_batches);
  LLMTRAIN_CHECK(options_.schedule.warmup_steps >= 0, "train.warmup_steps must be >= 0, got ",
                 options_.schedule.warmup_steps);
  options_.schedule.total_steps = options_.steps;
  peak_flops_ = options_.peak_flops > 0 ? options_.peak_flops : model::measure_sgemm_peak();
  if (comm_.rank() == 0) log_ = std::make_unique<MetricsLog>(options_.run_dir);
}

StepMetrics Trainer::train_step(BatchSource& source) {
  const auto step_start = Clock::now();
  StepMetrics m;
  model_.zero_grads();
  double loss_sum = 0, count = 0;
  std::int64_t tokens = 0, seq_len = 0;
  for (std::int64_t micro = 0; micro < options_.grad_accum; ++micro) {
    const auto wait_start = Clock::now();
    const Batch batch = source.next();
    m.data_wait_s += seconds_since(wait_start);
    const model::LossSum loss = model_.forward_backward(batch, 1.0 / double(options_.grad_accum));
    m.forward_s += model_.last_pass_times().forward_s;
    m.backward_s += model_.last_pass_times().backward_s;
    loss_sum += loss.sum;
    count += double(loss.count);
    tokens += batch.rows * batch.seq_len;
    seq_len = batch.seq_len;
  }
  const auto optimizer_start = Clock::now();
  // Ranks agree on the mean gradient, the loss, the token count and whether to stop, in one place.
  std::vector<dist::Request> reductions;
  for (auto& unit : model_.grads())
    reductions.push_back(comm_.all_reduce_sum(unit.flat.data(), unit.flat.size(), dist::DType::f32));
  for (auto& reduction : reductions) reduction.wait();
  const float mean = 1.0f / float(comm_.size());
  for (auto& unit : model_.grads())
    for (std::size_t i = 0; i < unit.flat.size(); ++i) unit.flat.data()[i] *= mean;
  double totals[4] = {loss_sum, count, double(tokens), stop_requested() ? 1.0 : 0.0};
  comm_.agree_sum(totals, 4);
  // Only this agreed value ends the run: a signal that reaches one rank between two all-reduces must not
  // make that rank leave the loop while the others enter the next step (they would wait for it forever).
  stop_agreed_ = totals[3] > 0;
  if (stop_agreed_) request_stop();
  m.grad_norm = optim::global_norm(model_.grads());
  // Every rank sees the same reduced loss and norm, so every rank stops here together.
  LLMTRAIN_CHECK(std::isfinite(double(totals[0])) && std::isfinite(m.grad_norm), "training diverged at step ",
                 step_ + 1, ": loss sum ", totals[0], ", gradient norm ", m.grad_norm,
                 " (lower train.lr, raise train.warmup_steps or set train.grad_clip)");
  m.lr = optim::learning_rate(options_.schedule, step_);
  optimizer_.step(model_.params(), model_.grads(), m.lr, optim::clip_factor(m.grad_norm, options_.grad_clip));
  m.optimizer_s = seconds_since(optimizer_start);
  ++step_;
  m.step = step_;
  m.loss = totals[1] > 0 ? double(totals[0]) / double(totals[1]) : 0.0;
  m.tokens = std::int64_t(totals[2]);
  m.step_s = seconds_since(step_start);
  m.tokens_per_s = double(m.tokens) / m.step_s;
  m.mfu = model_.config().train_flops(m.tokens, seq_len) / (m.step_s * peak_flops_ * double(comm_.size()));
  if (log_) log_->write_step(m);
  return m;
}

EvalResult Trainer::evaluate(BatchSource& source) {
  // The first evaluation draws its batches and keeps them: every later evaluation scores the same tokens,
  // so the held-out losses of a run are comparable with each other.
  while (std::int64_t(eval_batches_.size()) < options_.eval_batches) eval_batches_.push_back(source.next());
  double sums[2] = {0, 0};
  for (const auto& batch : eval_batches_) {
    const model::LossSum loss = model_.forward(batch);
    sums[0] += loss.sum;
    sums[1] += double(loss.count);
  }
  double totals[2] = {sums[0], sums[1]};
  comm_.agree_sum(totals, 2);
  EvalResult result;
  result.tokens = std::int64_t(totals[1]);
  result.loss = totals[1] > 0 ? double(totals[0]) / double(totals[1]) : 0.0;
  result.perplexity = std::exp(result.loss);
  if (log_) log_->write_eval(step_, result.loss, result.perplexity, result.tokens);
  return result;
}

std::vector<StepMetrics> Trainer::run(BatchSource& train, BatchSource* eval) {
  std::vector<StepMetrics> history;
  const auto start = Clock::now();
  while (step_ < options_.steps && !stop_agreed_) {
    history.push_back(train_step(train));
    const auto& m = history.back();
    if (log_ && options_.progress_every > 0 && (m.step % options_.progress_every == 0 || m.step == options_.steps))
      log_->progress(m, options_.steps, seconds_since(start));
    if (eval && options_.eval_every > 0 && step_ % options_.eval_every == 0 && step_ < options_.steps) {
      const EvalResult e = evaluate(*eval);
      if (log_) std::printf("eval at step %lld | loss %.4f | perplexity %.2f\n", static_cast<long long>(step_), e.loss, e.perplexity);
    }
  }
  if (eval) {
    const EvalResult e = evaluate(*eval);
    if (log_) std::printf("final eval at step %lld | loss %.4f | perplexity %.2f\n", static_cast<long long>(step_), e.loss, e.perplexity);
  }
  return history;
}

}  // namespace llmtrain::train
