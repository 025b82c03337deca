// The checkpoint policy as a trainer hook: a checkpoint every checkpoint.every_steps steps, and one when the
// run ends (by its steps, or by an agreed stop signal when checkpoint.on_stop). Collective.
#pragma once

#include <cstdint>
#include <functional>

#include "llmtrain/train/trainer.hpp"

namespace llmtrain::job {

class CheckpointHook final : public train::StepHook {
 public:
  // save(): writes the current step's checkpoint (collective). last_saved: the step a resumed run started at.
  CheckpointHook(std::function<void()> save, std::int64_t every_steps, bool on_stop, std::int64_t last_saved);
  void after_step(train::Trainer& trainer, const train::StepMetrics& metrics) override;
  void after_run(train::Trainer& trainer) override;

 private:
  std::function<void()> save_;
  std::int64_t every_;
  bool on_stop_;
  std::int64_t last_saved_;
};

}  // namespace llmtrain::job
