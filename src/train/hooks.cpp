// Stop agreement, metrics and evaluation between steps (see hooks.hpp).
#include "llmtrain/train/hooks.hpp"

#include <chrono>
#include <cstdio>

#include "llmtrain/core/counted.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/core/log.hpp"
#include "llmtrain/core/stop_signal.hpp"

namespace llmtrain::train {

void StopAgreement::after_step(Trainer& trainer, const StepMetrics&) {
  double flag = stop_requested() ? 1.0 : 0.0;
  trainer.comm().agree_max(&flag, 1);
  if (flag > 0) {
    request_stop();  // every rank now reports the same reason
    trainer.request_stop(true);
  }
}

MetricsReport::MetricsReport(MetricsLog* log, std::int64_t every, const CheckpointCost* checkpoint_cost)
    : log_(log), every_(every), checkpoint_cost_(checkpoint_cost) {}

void MetricsReport::set_recovery(std::int64_t lost_steps, double failed_at_unix_s) {
  recovery_ = Recovery{lost_steps, failed_at_unix_s};
}

void MetricsReport::after_step(Trainer& trainer, const StepMetrics& step) {
  if (!log_) return;
  StepMetrics m = step;
  if (checkpoint_cost_) m.ckpt = *checkpoint_cost_;
  if (recovery_) {
    const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    m.recovery = Recovery{recovery_->lost_steps, now - recovery_->seconds};
    recovery_.reset();
    log_info("recovery: ", counted(m.recovery->lost_steps, "step"), " lost; step ", m.step, " done ", m.recovery->seconds,
             " s after the failure");
  }
  log_->write_step(m);
  if (first_step_ < 0) first_step_ = m.step;
  const std::int64_t total = trainer.options().steps;
  if (every_ > 0 && (m.step % every_ == 0 || m.step == total))
    log_->progress(m, total, since_start_.seconds(), m.step - first_step_ + 1);
}

Evaluation::Evaluation(BatchSource& source, std::int64_t batches, std::int64_t every, MetricsLog* log)
    : source_(source), batches_(batches), every_(every), log_(log) {
  LLMTRAIN_CHECK(batches_ > 0, "train.eval_batches must be positive, got ", batches_);
  LLMTRAIN_CHECK(every_ >= 0, "train.eval_every must be >= 0, got ", every_);
}

void Evaluation::after_step(Trainer& trainer, const StepMetrics& m) {
  if (every_ > 0 && m.step % every_ == 0 && m.step < trainer.options().steps && !trainer.stop_requested())
    evaluate(trainer, "eval");
}

void Evaluation::after_run(Trainer& trainer) {
  if (trainer.stopped_by_signal()) {
    log_info("final evaluation skipped: the run was stopped by a signal after step ", trainer.step());
    return;
  }
  if (last_step_ != trainer.step()) evaluate(trainer, "final eval");
}

void Evaluation::evaluate(Trainer& trainer, const char* label) {
  while (std::int64_t(held_out_.size()) < batches_) held_out_.push_back(source_.next());
  const EvalResult e = trainer.evaluate(held_out_);
  results_.push_back(e);
  last_step_ = trainer.step();
  if (!log_) return;
  log_->write_eval(trainer.step(), e.loss, e.perplexity, e.tokens);
  std::printf("%s at step %lld | loss %.4f | perplexity %.2f\n", label, static_cast<long long>(trainer.step()), e.loss,
              e.perplexity);
  std::fflush(stdout);
}

}  // namespace llmtrain::train
