// A training run assembled from its configuration: the one place that builds the parts and hands each
// the parts it uses (docs/architecture.md has the picture).
//
//   runtime (MPI) -> device (train.device) -> collectives -> tokenizer -> train / eval loaders
//                 -> parameter store (replicated; sharded with FSDP) -> model (reaches units via the store)
//                 -> AdamW (over the store's ranges) -> trainer + hooks (stop agreement, provenance,
//                    metrics, evaluation, checkpoints), after restoring checkpoint.resume (or, when
//                    there is none, the parameters of checkpoint.init_from)
//
// Everything here is collective: every rank builds the same job from the same configuration. Set-up errors
// are agreed (dist::agree), so a bad configuration or file is reported once. Kokkos must be initialised.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "llmtrain/ckpt/memory_tier.hpp"
#include "llmtrain/config/config.hpp"
#include "llmtrain/dist/runtime.hpp"
#include "llmtrain/train/trainer.hpp"

namespace llmtrain::job {

class Job {
 public:
  // peak_flops: per-rank flop/s for MFU (0: on a CUDA device its datasheet bf16 peak, train/device_peak.hpp,
  // where known; else measure the gemm peak now).
  Job(const Config& config, dist::Runtime& runtime, double peak_flops = 0);
  ~Job();
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  // Trains until train.steps or an agreed stop; returns the metrics of every step taken.
  std::vector<train::StepMetrics> run();

  train::Trainer& trainer();
  // The batches the trainer consumes (the training loader, through the provenance log when enabled).
  BatchSource& train_batches();
  const ModelConfig& model_config() const;

  // Collective: the training loader's global state: what every rank has consumed so far, every rank's
  // state blob in rank order. The held-out loader has none: every run draws the same held-out batches
  // from its start (train/hooks.hpp).
  std::vector<std::string> loader_states();
  // Continues the training loader from a global state saved by a run on any number of ranks (data::Loader
  // rescales it). Before run().
  void restore_loader(const std::vector<std::string>& states);

  // Collective: the bad records (data.on_bad_record = "skip") the loaders of all ranks skipped in this
  // process's run, by file, summed over ranks; files with none are absent.
  std::map<std::string, std::uint64_t> skipped_records();
  // Collective: saves the current step's checkpoint into checkpoint.dir, points LATEST at it and applies
  // keep_last / keep_every; with checkpoint.async from a snapshot, in the background (the file is complete
  // when settle_checkpoint(true) returns or the next checkpoint starts), else before it returns. Returns its
  // path; `cost`, when given, receives what it cost the caller (train/metrics.hpp).
  std::string save_checkpoint(train::CheckpointCost* cost = nullptr);
  // Collective: whether a background checkpoint write is still in flight on some rank (with wait: waits for
  // it first, and returns false). A failed write is thrown on every rank.
  bool settle_checkpoint(bool wait);
  // Collective: continues from a checkpoint written on any number of ranks: parameters, AdamW moments and
  // step, the trainer's step and the training loader. Before run(). Refuses a checkpoint of another tokenizer or
  // whose settings differ where they may not (docs/checkpoints.md). The constructor already applied
  // checkpoint.resume; this is for a caller that picks the file itself.
  void restore_checkpoint(const std::string& path);
  // The checkpoint this job continued from ("" for a fresh start; "<memory_dir> (memory snapshot at step N)"
  // for the memory tier).
  const std::string& resumed_from() const;

 private:
  // checkpoint.resume: "auto" picks the newest checkpoint in checkpoint.dir that verifies, or the memory
  // tier's newest complete generation when it is as new.
  void resume();
  // checkpoint.init_from, when resume() restored nothing: the parameters only, from a checkpoint of the same
  // [model] settings and tokenizer; optimizer, schedule and loader stay fresh.
  void initialize_from(const std::string& path);
  // What a checkpoint or memory snapshot of the current step holds (every rank's loader state, or this
  // rank's only).
  ckpt::Contents checkpoint_contents(bool every_loader);
  // Shared by disk and memory restores: refuses another tokenizer or changed settings; continues the loader,
  // trainer and provenance; warns of a global batch change.
  void check_resumable(const std::string& what, const ckpt::Metadata& m);
  void continue_from(const std::string& what, const ckpt::Metadata& m, const std::vector<std::string>& states);
  void warn_batch_change(const ckpt::Metadata& m);
  // checkpoint.memory_every_steps: the memory tier, before resume() looks into it.
  void start_memory_tier();
  void restore_memory(const ckpt::MemoryTier::Found& found);

  struct Parts;
  std::unique_ptr<Parts> parts_;
};

// `llmtrain input.toml` after argument parsing: loads the configuration with its --set overrides (agreed),
// prints the dry-run report (for dry_run_world_size ranks; 0: this job's) or sets up logging, builds the job
// and trains. Returns the exit status. The caller installs the stop-signal handlers first
// (core/stop_signal.hpp), before MPI starts.
int run_llmtrain(const std::string& config_path, const std::vector<std::string>& overrides, bool dry_run,
                 dist::Runtime& runtime, int dry_run_world_size = 0);

}  // namespace llmtrain::job
