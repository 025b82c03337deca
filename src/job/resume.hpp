// What a resumed run checks against its checkpoint and cleans up in its run directory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace llmtrain::job {

// The settings that may change at a resume (docs/checkpoints.md says why): the run's length and batch per
// rank (with the world size), where files go, logging, evaluation, checkpointing, transport and loader
// threads, and input paths (the loader and the tokenizer fingerprint check the contents instead).
bool may_change_at_resume(const std::string& key);

// "key: checkpoint has A, this run has B" for every other setting that differs between two resolved
// configurations (to_toml text; datasets keyed "data.datasets[i].key").
std::vector<std::string> resume_conflicts(const std::string& saved_toml, const std::string& current_toml);

// Drops the lines logged after `step` (a crash after the checkpoint) from every run_dir/provenance.rank*.jsonl
// (train::keep_steps_up_to), so the resumed run appends its steps exactly once. A torn last line goes too.
// metrics.jsonl is cut back the same way by train::MetricsLog::start when the run starts.
void trim_provenance(const std::string& run_dir, std::int64_t step);

}  // namespace llmtrain::job
