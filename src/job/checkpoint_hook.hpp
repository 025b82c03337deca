// The checkpoint policy as a trainer hook: a checkpoint every checkpoint.every_steps steps, a memory snapshot
// every checkpoint.memory_every_steps, and a checkpoint when the
// run ends (by its steps, or by an agreed stop signal when checkpoint.on_stop); the run's end and a stop wait
// for the write in flight. It keeps what each step's checkpointing cost the loop, which the metrics report
// (the next hook) writes on the step's line. Collective.
#pragma once

#include <cstdint>
#include <functional>

#include "llmtrain/train/trainer.hpp"

namespace llmtrain::job {

// The job's side of a checkpoint, as the hook calls it; both collective.
struct CheckpointWrites {
  // Saves the current step: takes a snapshot and starts its write in the background, or writes it.
  std::function<train::CheckpointCost()> save;
  // Whether a write is still in flight on some rank (agreed); a failed write is thrown on every rank.
  // With wait, first waits for it (and returns false).
  std::function<bool(bool wait)> settle;
  // The memory tier (none: off): a snapshot of the current step; and, after the run's last write, the end
  // of a run (the job removes the snapshots of a complete one).
  std::function<train::CheckpointCost()> snapshot;
  std::function<void(train::Trainer&)> finished;
};

class CheckpointHook final : public train::StepHook {
 public:
  // last_saved: the step a resumed run started at. memory_every_steps: writes.snapshot's period (0: none).
  CheckpointHook(CheckpointWrites writes, std::int64_t every_steps, std::int64_t memory_every_steps, bool on_stop,
                 std::int64_t last_saved);
  void after_step(train::Trainer& trainer, const train::StepMetrics& metrics) override;
  void after_run(train::Trainer& trainer) override;
  // The cost of the latest step's checkpointing (zero at a step that saved nothing).
  const train::CheckpointCost& cost() const { return cost_; }

 private:
  CheckpointWrites writes_;
  std::int64_t every_, memory_every_;
  bool on_stop_;
  std::int64_t last_saved_;
  bool in_flight_ = false;  // agreed: a write may be running on some rank
  train::CheckpointCost cost_;
};

}  // namespace llmtrain::job
