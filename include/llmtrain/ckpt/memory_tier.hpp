// The memory tier of checkpoints (docs/checkpoints.md): every checkpoint.memory_every_steps steps each rank
// writes its part of the state (its owned ranges of parameters and moments, its loader state, the run's
// metadata, a checksum) as one file in node-local memory (checkpoint.memory_dir, /dev/shm by default) and
// sends a copy to a buddy rank on another node, so that losing a whole node loses no state older than those
// steps. A restart restores from these parts on any number of ranks, as from a disk checkpoint.
//
// Layout: DIR/step_XXXXXXXX/part_RRRRR.bin (this node's ranks' own parts) and buddy_part_RRRRR.bin (the parts
// of ranks on the previous node), each written as .tmp and renamed. A node is the set of ranks with the same
// LLMTRAIN_NODE_ID (environment) where it is set, else those sharing memory (MPI_Comm_split_type); rank i of
// node k sends to rank i mod |node k+1| of node k+1. On a single node there is no buddy.
//
// Cost to the training loop: snapshot() copies the part into a buffer; a thread of this rank computes the
// checksum, writes the file, exchanges buddy copies on a duplicated communicator (MPI_THREAD_MULTIPLE) and
// removes this rank's files of older generations (two are kept). At most one snapshot is in flight: the next
// one waits for it. A failed file write (memory full) is a warning, not the end of the run.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "llmtrain/ckpt/checkpoint.hpp"

namespace llmtrain::ckpt {

// The part files of one generation as found in one memory directory (for `llmtrain-ckpt list`).
struct MemoryGeneration {
  std::int64_t step = 0;
  std::vector<std::string> parts, buddy_parts;  // file names
  std::uint64_t bytes = 0;
};
// Generations in `dir`, oldest first (empty when dir does not exist). Headers are not read.
std::vector<MemoryGeneration> list_memory_generations(const std::string& dir);

// Bytes of one rank's part for a model of `parameters` parameters on `world_size` ranks (3 x fp32 of its
// share; the metadata is kilobytes): what the dry run and the start-up check count, per part.
double memory_part_bytes(std::int64_t parameters, int world_size);

class MemoryTier {
 public:
  // Collective over comm (duplicates it, groups the ranks into nodes; LLMTRAIN_NODE_ID must be set on every
  // rank or none) and creates dir with mode 0700. `key` identifies the run and the configuration: parts with
  // another key are ignored.
  MemoryTier(MPI_Comm comm, std::string dir, std::uint64_t key);
  ~MemoryTier();  // waits for the snapshot in flight
  MemoryTier(const MemoryTier&) = delete;
  MemoryTier& operator=(const MemoryTier&) = delete;

  const std::string& dir() const { return dir_; }
  int node_count() const { return node_count_; }

  struct Started {
    double blocked_s = 0, snapshot_s = 0;
  };
  // Collective: waits for the snapshot in flight (logging its failure as a warning), copies this rank's part
  // of `contents` (train_loader: this rank's blob only) and hands it to the thread.
  // Fault injection for tests: LLMTRAIN_FAULT=memory.kill:<step> kills rank 0 with SIGKILL once every rank's
  // part of that step (and its buddy copy) is written.
  Started snapshot(const Contents& contents);
  double wait();

  // The newest generation of which every saving rank's part is present on some node and verifies.
  struct Found {
    std::int64_t step = -1;  // -1: none
    int local_parts = 0, buddy_parts = 0;
    struct Part {
      int saved_rank = 0, holder = 0;  // the rank that reads it
      std::string path;
      std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
    };
    std::vector<Part> parts;  // by saved rank
  };
  // Collective: every rank reads and verifies a share of its node's part files (a corrupted one is a warning
  // naming it; another run's are ignored) and all agree on the newest complete generation.
  Found find();
  // Collective: fills `contents`' units (this rank's new ranges) from the generation `found`, moving element
  // ranges between ranks (MPI_Alltoallv); sets its metadata, optimizer_step, rng and train_loader (every
  // saving rank's blob, in rank order).
  void restore(const Found& found, Contents& contents,
               std::vector<model::ParamUnit<float>>& params, std::vector<model::ParamUnit<float>>& first_moments,
               std::vector<model::ParamUnit<float>>& second_moments);
  // The step the kept generations count from after a resume (that generation is kept until two newer exist).
  void resumed_at(std::int64_t step) { kept_ = step; }
  // Collective: removes every generation of this run (the run is complete; parts with another key stay), and
  // the directory when empty; one rank per node deletes the files.
  void remove_all();

 private:
  void write_in_background(std::int64_t step);

  MPI_Comm comm_ = MPI_COMM_NULL;
  std::string dir_;
  std::uint64_t key_;
  int rank_ = 0, size_ = 1, node_count_ = 1, node_rank_ = 0, node_size_ = 1;
  int buddy_ = -1;                // the rank that keeps a copy of this rank's part
  std::vector<int> senders_;      // the ranks whose parts this rank keeps
  std::vector<std::pair<std::int64_t, std::int64_t>> owned_;  // per unit, from the first snapshot
  std::vector<char> buffer_;      // the part in flight, in its file layout
  std::int64_t kept_ = -1;        // the previous generation written (kept with the current one)
  std::thread thread_;
  std::string failure_;           // of the last background write, for the next snapshot's warning
};

}  // namespace llmtrain::ckpt
