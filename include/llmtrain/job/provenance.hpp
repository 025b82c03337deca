// Provenance from training (log.provenance): every row a rank consumes, written as JSON lines to
// <run_dir>/provenance.rank<R>.jsonl in the format of `llmtrain-data simulate --provenance`, so the
// loader's exactly-once audit can be run on a real run, also one that was stopped and resumed.
//
// One object is both the trainer's batch source (it passes the loader's batches through and keeps their
// provenance) and a step hook (it writes what the step consumed, with the step's number, after the step).
// Lines carry "step" = the 1-based optimizer step and "row" = the row's index within that step.
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include "llmtrain/core/batch.hpp"
#include "llmtrain/data/loader.hpp"
#include "llmtrain/train/trainer.hpp"

namespace llmtrain::job {

class ProvenanceLog final : public BatchSource, public train::StepHook {
 public:
  // Appends to `path` (a resumed run continues the file of the run it resumes).
  ProvenanceLog(data::Loader& loader, const std::string& path, int rank);

  Batch next() override;
  void next_into(Batch& batch) override;  // the loader's, so that it reuses the caller's storage
  void after_step(train::Trainer& trainer, const train::StepMetrics& metrics) override;

 private:
  data::Loader& loader_;
  std::string path_;
  int rank_;
  std::ofstream out_;
  std::vector<data::RowProvenance> pending_;  // rows handed out since the last step ended
};

}  // namespace llmtrain::job
