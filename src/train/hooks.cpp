// Stop agreement, metrics, evaluation and text samples between steps (see hooks.hpp).
#include "llmtrain/train/hooks.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "llmtrain/core/counted.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/core/log.hpp"
#include "llmtrain/core/quoted.hpp"
#include "llmtrain/core/stop_signal.hpp"
#include "llmtrain/model/decoder.hpp"

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
  recovery_ = Recovery{lost_steps, 0.0, failed_at_unix_s};
}

void MetricsReport::after_step(Trainer& trainer, const StepMetrics& step) {
  if (!log_) return;
  StepMetrics m = step;
  if (checkpoint_cost_) m.ckpt = *checkpoint_cost_;
  if (recovery_) {
    const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    m.recovery = Recovery{recovery_->lost_steps, now - recovery_->failed_at_unix_s, recovery_->failed_at_unix_s};
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

TextSample::TextSample(std::vector<TokenId> prompt, std::int64_t every, std::int64_t tokens, std::int64_t vocab,
                       std::optional<TokenId> eos, Decode decode, bool speak)
    : prompt_(std::move(prompt)), every_(every), tokens_(tokens), vocab_(vocab), eos_(eos), decode_(std::move(decode)),
      speak_(speak) {
  LLMTRAIN_CHECK(every_ >= 0, "train.sample_every must be >= 0, got ", every_);
  LLMTRAIN_CHECK(tokens_ > 0, "train.sample_tokens must be positive, got ", tokens_);
}

void TextSample::after_step(Trainer& trainer, const StepMetrics& m) {
  if (every_ == 0 || m.step % every_ != 0 || m.step >= trainer.options().steps || trainer.stop_requested()) return;
  model::Model<float>& net = trainer.model();
  const std::int64_t prompt = std::int64_t(prompt_.size());
  const std::int64_t capacity = std::min(net.config().max_seq_len, prompt + tokens_);
  LLMTRAIN_CHECK(prompt > 0 && prompt < capacity, "train.sample_prompt has ", prompt,
                 " tokens; it must have at least 1 and fewer than data.seq_len = ", net.config().max_seq_len);
  model::Decoder<float> decoder(net, 1, capacity);
  std::vector<float> logits = decoder.prefill({prompt_});
  const std::int64_t vocab = std::min(vocab_, net.config().vocab_size);
  last_.clear();
  while (true) {
    const auto next = TokenId(std::max_element(logits.begin(), logits.begin() + vocab) - logits.begin());
    if (eos_ && next == *eos_) break;
    last_.push_back(next);
    if (std::int64_t(last_.size()) == tokens_ || decoder.length(0) == capacity) break;
    logits = decoder.step({next});
  }
  if (!speak_) return;
  std::printf("sample at step %lld: %s\n", static_cast<long long>(m.step), quoted(decode_(last_)).c_str());
  std::fflush(stdout);
}

}  // namespace llmtrain::train
