// The directories a run writes into, checked before it spends any time: each can be created and written
// (a probe file, synced and removed), and checkpoint.dir has room for the checkpoints this run keeps.
// `llmtrain --preflight` reports every finding; a run makes the same checks at start-up and refuses to take
// its first step when one fails, so an unwritable or full checkpoint.dir is not found only at the first
// write (with checkpoint.every_steps = 0, after the whole training).
#pragma once

#include <string>

#include "check_result.hpp"
#include "llmtrain/config/config.hpp"
#include "llmtrain/core/model_config.hpp"
#include "llmtrain/dist/runtime.hpp"

namespace llmtrain::job {

// `dir` (the value of configuration key `key`): created, a probe file written, synced and removed. Returns
// the file system's free bytes, or -1 after recording the problem (naming the key, the path and the reason).
double check_writable_dir(const char* key, const std::string& dir, CheckResult& result);

// Whether the memory tier will have buddy copies: more than one node, or LLMTRAIN_NODE_ID set (which may
// group the ranks of one machine into several nodes).
bool buddies_expected(const dist::Runtime& runtime);

// How much room checkpoint.dir must have.
enum class CheckpointRoom {
  kept,  // every checkpoint that exists at once (keep_last + 1, or all this run writes): the preflight's rule
  one,   // one checkpoint, what the next write needs (less than kept is a warning): a run's start-up rule
};

// checkpoint.dir writable, with room for checkpoints of `model` as `room` says (sized as the writer sizes
// them). A problem names the key, the directory, the free and the needed space.
void check_checkpoint_dir(const Config& config, const ModelConfig& model, CheckpointRoom room, CheckResult& result);

// checkpoint.memory_dir (when checkpoint.memory_every_steps is on): writable, with room for two generations
// of the parts of this node's `local_ranks` ranks and, with `buddies`, their buddy copies (ckpt/memory_tier.hpp).
// Too little room is a problem: /dev/shm is often 64 MiB in containers.
void check_memory_dir(const Config& config, const ModelConfig& model, int world_size, int local_ranks, bool buddies,
                      CheckResult& result);

// Collective, a run's start-up check: on one rank per node, train.run_dir writable and checkpoint.dir (when
// set) writable with room for one checkpoint. Throws the problems (every rank, through dist::agree's rule);
// rank 0 logs the warnings of every node.
void check_run_directories(const Config& config, const ModelConfig& model, const dist::Runtime& runtime);

}  // namespace llmtrain::job
