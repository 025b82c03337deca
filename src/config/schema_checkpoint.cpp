// The [checkpoint] section of the configuration schema (schema.hpp): where and how often checkpoints are
// written, which are kept, what a run resumes from, how long a write may take. Each entry binds a key to its
// member of CheckpointConfig.
#include "field_builders.hpp"

namespace llmtrain::schema {

SectionSchema checkpoint_section() {
  using C = Config;
  SectionSchema section{"checkpoint",
                        "Parallel HDF5 checkpoints of model, optimizer and data-loader state (docs/checkpoints.md). "
                        "With a dir, a run resumes from the newest complete checkpoint there and writes one at its end.",
                        {}};
  section.fields = {
      bind_member(&C::checkpoint, &CheckpointConfig::dir, text<C>("checkpoint", "dir", Kind::OutputPath, "",
           "Directory of step_XXXXXXXX.h5 checkpoints and LATEST; empty: no checkpoints are written.")),
      bind_member(&C::checkpoint, &CheckpointConfig::every_steps, integer<C>("checkpoint", "every_steps", 0, 0, kMaxInt,
           "Write a checkpoint every N optimizer steps; 0: only at the end of the run (and on a stop signal).")),
      bind_member(&C::checkpoint, &CheckpointConfig::on_stop, boolean<C>("checkpoint", "on_stop", true,
           "When a stop signal (SIGTERM, SIGINT, SIGUSR1) ends the run, write a checkpoint after the last step.")),
      bind_member(&C::checkpoint, &CheckpointConfig::keep_last, integer<C>("checkpoint", "keep_last", 3, 0, kMaxInt,
           "Keep the newest N checkpoints and delete older ones (except those keep_every keeps); 0: keep all.")),
      bind_member(&C::checkpoint, &CheckpointConfig::keep_every, integer<C>("checkpoint", "keep_every", 0, 0, kMaxInt,
           "Also keep every checkpoint whose step is a multiple of N, whatever keep_last says; 0: none.")),
      bind_member(&C::checkpoint, &CheckpointConfig::resume, text<C>("checkpoint", "resume", Kind::String, "auto",
           "\"auto\": continue from the newest checkpoint in dir that verifies (falling back to older ones), or start "
           "fresh when there is none; \"never\": start fresh; a path: continue from that file.")),
      bind_member(&C::checkpoint, &CheckpointConfig::init_from, text<C>("checkpoint", "init_from", Kind::InputPath, "",
           "A checkpoint (e.g. one `llmtrain-ckpt import` wrote) whose parameters a new run starts from, with fresh "
           "optimizer moments, schedule and data loader; only when resume finds no checkpoint of this run. Its "
           "[model] settings and tokenizer must be this run's.")),
      bind_member(&C::checkpoint, &CheckpointConfig::alignment, integer<C>("checkpoint", "alignment", 1 << 20, 0, 1 << 30,
           "Datasets of at least half this many bytes start at a multiple of it (the file system's stripe or "
           "block size); 0: no alignment.")),
      bind_member(&C::checkpoint, &CheckpointConfig::file_locking, boolean<C>("checkpoint", "file_locking", false,
           "Use HDF5's file locking (off by default: several parallel file systems do not support it).")),
      bind_member(&C::checkpoint, &CheckpointConfig::timeout_s, real<C>("checkpoint", "timeout_s", 1800, 0, 1e7,
           "A checkpoint write that takes longer ends the job with an error instead of hanging (e.g. a file "
           "system that stopped answering); 0: no limit.")),
      bind_member(&C::checkpoint, &CheckpointConfig::async, boolean<C>("checkpoint", "async", true,
           "Write checkpoints in the background: a step copies what it saves into staging memory (3 x 4 bytes per "
           "parameter / ranks) and training goes on while a writer thread writes the file; the next checkpoint, a "
           "stop and the run's end wait for it. false: every rank waits for the whole write.")),
      bind_member(&C::checkpoint, &CheckpointConfig::memory_every_steps, integer<C>("checkpoint", "memory_every_steps", 0, 0, kMaxInt,
           "Every N steps, each rank also keeps its part of the state in node-local memory (memory_dir) and a copy "
           "at a buddy rank on another node; resume = \"auto\" takes it when it is the newest (docs/checkpoints.md). "
           "Needs a dir; 0: off.")),
      bind_member(&C::checkpoint, &CheckpointConfig::memory_dir, text<C>("checkpoint", "memory_dir", Kind::OutputPath, "",
           "Directory of the memory tier on each node (equal within a node); empty: /dev/shm/llmtrain-<key>, the "
           "key a hash of dir and the settings a resume may not change.")),
  };
  return section;
}

}  // namespace llmtrain::schema
