// Rows consumed by training, as provenance JSON lines (see provenance.hpp).
#include "llmtrain/job/provenance.hpp"

#include <filesystem>

#include "llmtrain/core/error.hpp"
#include "llmtrain/data/simulate.hpp"

namespace llmtrain::job {

ProvenanceLog::ProvenanceLog(data::Loader& loader, const std::string& path, int rank)
    : loader_(loader), path_(path), rank_(rank) {
  const auto parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  LLMTRAIN_CHECK(!ec, parent.string(), ": cannot create the directory for provenance: ", ec.message());
  out_.open(path, std::ios::app);
  LLMTRAIN_CHECK(out_.good(), path, ": cannot open for appending provenance");
}

Batch ProvenanceLog::next() {
  Batch batch;
  next_into(batch);
  return batch;
}

void ProvenanceLog::next_into(Batch& batch) {
  loader_.next_into(batch);
  const auto& rows = loader_.last_provenance();
  pending_.insert(pending_.end(), rows.begin(), rows.end());
}

void ProvenanceLog::after_step(train::Trainer& trainer, const train::StepMetrics&) {
  for (std::size_t row = 0; row < pending_.size(); ++row)
    out_ << data::provenance_json(trainer.step(), rank_, std::int64_t(row), pending_[row]) << '\n';
  out_.flush();
  LLMTRAIN_CHECK(out_.good(), path_, ": writing provenance failed at step ", trainer.step());
  pending_.clear();
}

}  // namespace llmtrain::job
