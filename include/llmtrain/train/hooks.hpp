// The standard work between steps, as trainer hooks (the job adds them in this order):
//   StopAgreement  - a stop signal seen by any rank stops every rank after the same step;
//   MetricsReport  - rank 0's metrics.jsonl line and progress line;
//   Evaluation     - held-out loss every eval_every steps and at the end of the run;
//   TextSample     - a greedy continuation of a prompt every sample_every steps.
// Each is collective where it says so: every rank must add the same hooks in the same order.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "llmtrain/core/batch.hpp"
#include "llmtrain/core/timer.hpp"
#include "llmtrain/train/metrics.hpp"
#include "llmtrain/train/trainer.hpp"

namespace llmtrain::train {

// Collective: agrees on the process's stop flag (core/stop_signal.hpp) after every step. Only the agreed
// value ends the loop: a signal that reaches one rank between two agreements must not make that rank leave
// while the others enter the next step (they would wait for it forever).
class StopAgreement final : public StepHook {
 public:
  void after_step(Trainer& trainer, const StepMetrics& metrics) override;
};

// Writes each step to `log` (rank 0 holds a log; other ranks pass nullptr and do nothing) and prints a
// progress line every `every` steps (0: none). With `checkpoint_cost` (a run that writes checkpoints; the
// checkpoint hook, which runs before this one, keeps it), each line carries that step's cost.
class MetricsReport final : public StepHook {
 public:
  MetricsReport(MetricsLog* log, std::int64_t every, const CheckpointCost* checkpoint_cost = nullptr);
  // A relaunched run: its first line carries `lost_steps` and the seconds since failed_at_unix_s (the
  // failure's wall-clock time, seconds since the epoch), which is also logged.
  void set_recovery(std::int64_t lost_steps, double failed_at_unix_s);
  void after_step(Trainer& trainer, const StepMetrics& metrics) override;

 private:
  MetricsLog* log_;
  std::int64_t every_;
  const CheckpointCost* checkpoint_cost_;
  std::optional<Recovery> recovery_;  // until the first line, which computes its seconds
  Stopwatch since_start_;
  std::int64_t first_step_ = -1;  // the first step this process took (a resumed run starts past 1)
};

// Collective: evaluates every `every` steps (0: only at the end) and once when the run ends, on `batches`
// batches drawn from `source` at the first evaluation and reused by every later one, so the held-out losses
// of a run are comparable. `source` must start where every attempt of the run starts it (the job builds the
// held-out loader afresh and never restores it), so a resumed run evaluates the same text as the
// uninterrupted one and its held-out losses are bitwise equal. A run ended by a stop signal skips the final evaluation (a pre-emption grace
// period is short) and says so.
class Evaluation final : public StepHook {
 public:
  Evaluation(BatchSource& source, std::int64_t batches, std::int64_t every, MetricsLog* log);
  void after_step(Trainer& trainer, const StepMetrics& metrics) override;
  void after_run(Trainer& trainer) override;
  const std::vector<EvalResult>& results() const { return results_; }

 private:
  void evaluate(Trainer& trainer, const char* label);

  BatchSource& source_;
  std::int64_t batches_, every_;
  MetricsLog* log_;
  std::vector<Batch> held_out_;
  std::vector<EvalResult> results_;
  std::int64_t last_step_ = -1;
};

// Collective: every `every` steps (not after the last), the greedy continuation of `prompt` (token ids,
// framed) of at most `tokens` tokens among ids [0, vocab) (the tokenizer's: never a padding id), stopping
// at `eos`, through the trainer's own model with a key/value cache (model/decoder.hpp). Every rank decodes, so that under fsdp/hsdp each takes part in the gathers; the
// logits are the same on every rank, so is every argmax. Rank 0 (speak) prints "sample at step N: TEXT" with
// TEXT quoted, its decode()d continuation.
class TextSample final : public StepHook {
 public:
  using Decode = std::function<std::string(const std::vector<TokenId>&)>;
  TextSample(std::vector<TokenId> prompt, std::int64_t every, std::int64_t tokens, std::int64_t vocab,
             std::optional<TokenId> eos, Decode decode, bool speak);
  void after_step(Trainer& trainer, const StepMetrics& metrics) override;
  // The continuation of the last sample (ids after the prompt), on every rank.
  const std::vector<TokenId>& last() const { return last_; }

 private:
  std::vector<TokenId> prompt_;
  std::int64_t every_, tokens_, vocab_;
  std::optional<TokenId> eos_;
  Decode decode_;
  bool speak_;
  std::vector<TokenId> last_;
};

}  // namespace llmtrain::train
