// When checkpoints are written (see checkpoint_hook.hpp).
#include "checkpoint_hook.hpp"

#include <utility>

#include "llmtrain/core/log.hpp"

namespace llmtrain::job {

CheckpointHook::CheckpointHook(CheckpointWrites writes, std::int64_t every_steps, std::int64_t memory_every_steps,
                               bool on_stop, std::int64_t last_saved)
    : writes_(std::move(writes)),
      every_(every_steps),
      memory_every_(writes_.snapshot ? memory_every_steps : 0),
      on_stop_(on_stop),
      last_saved_(last_saved) {}

void CheckpointHook::after_step(train::Trainer& trainer, const train::StepMetrics&) {
  cost_ = {};
  // A write that failed in the background ends the job within a step, not at the next checkpoint.
  if (in_flight_) in_flight_ = writes_.settle(false);
  if (every_ > 0 && trainer.step() % every_ == 0) {
    cost_ = writes_.save();
    last_saved_ = trainer.step();
    in_flight_ = true;
  }
  if (memory_every_ > 0 && trainer.step() % memory_every_ == 0) {
    const train::CheckpointCost memory = writes_.snapshot();
    cost_.blocked_s += memory.blocked_s;
    cost_.snapshot_s += memory.snapshot_s;
  }
}

void CheckpointHook::after_run(train::Trainer& trainer) {
  if (trainer.step() != last_saved_) {
    if (trainer.stopped_by_signal() && !on_stop_)
      log_warn("stopped by a signal with checkpoint.on_stop = false: steps after ", last_saved_, " are not saved");
    else {
      writes_.save();
      last_saved_ = trainer.step();
    }
  }
  in_flight_ = writes_.settle(true);
  if (writes_.finished) writes_.finished(trainer);
}

}  // namespace llmtrain::job
