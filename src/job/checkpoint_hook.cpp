// When checkpoints are written (see checkpoint_hook.hpp).
#include "checkpoint_hook.hpp"

#include <utility>

#include "llmtrain/core/log.hpp"

namespace llmtrain::job {

CheckpointHook::CheckpointHook(std::function<void()> save, std::int64_t every_steps, bool on_stop, std::int64_t last_saved)
    : save_(std::move(save)), every_(every_steps), on_stop_(on_stop), last_saved_(last_saved) {}

void CheckpointHook::after_step(train::Trainer& trainer, const train::StepMetrics&) {
  if (every_ <= 0 || trainer.step() % every_ != 0) return;
  save_();
  last_saved_ = trainer.step();
}

void CheckpointHook::after_run(train::Trainer& trainer) {
  if (trainer.step() == last_saved_) return;
  if (trainer.stopped_by_signal() && !on_stop_) {
    log_warn("stopped by a signal with checkpoint.on_stop = false: steps after ", last_saved_, " are not saved");
    return;
  }
  save_();
  last_saved_ = trainer.step();
}

}  // namespace llmtrain::job
