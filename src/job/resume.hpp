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

// The settings that may not change at a resume, one "key = value" line each in key order (the memory tier's
// key, memory_dir.hpp).
std::string fixed_settings(const std::string& toml);

// "key: checkpoint has A, this run has B" for every other setting that differs between two resolved
// configurations (to_toml text; datasets keyed "data.datasets[i].key"). A setting the checkpoint does not
// have (written before the setting existed) is no conflict while this run leaves it at its default.
std::vector<std::string> resume_conflicts(const std::string& saved_toml, const std::string& current_toml);

// "key: checkpoint has A, this run has B" for the [model] settings that decide what the parameters compute
// (all but model.seed, model.init_std, model.mask_documents and model.max_position_embeddings): what a run
// starting from another run's parameters (checkpoint.init_from) must share with it.
std::vector<std::string> model_conflicts(const std::string& saved_toml, const std::string& current_toml);

// A warning when the rows per optimizer step (ranks x train.batch_size x train.grad_accum) differ from the
// checkpoint's: allowed (the batch per rank usually follows the world size), but the loss curve and the steps'
// data see it, and a resume on fewer ranks with the same settings silently halves it otherwise. Says which
// batch per rank would keep it. Empty when equal.
std::string global_batch_change(const std::string& saved_toml, std::int64_t saved_world_size,
                                const std::string& current_toml, std::int64_t current_world_size);

// Drops the lines logged after `step` (a crash after the checkpoint) from every run_dir/provenance.rank*.jsonl
// (train::keep_steps_up_to), so the resumed run appends its steps exactly once. A torn last line goes too.
// metrics.jsonl is cut back the same way by train::MetricsLog::start when the run starts.
void trim_provenance(const std::string& run_dir, std::int64_t step);

}  // namespace llmtrain::job
