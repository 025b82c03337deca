// One checkpoint: a single HDF5 file written and read collectively by every rank with parallel HDF5.
//
// Layout (docs/checkpoints.md): global shapes that do not depend on the world size W,
//   /model/<unit>/<tensor>          fp32, the tensor's shape
//   /optim/<unit>/<tensor>/{m,v}    fp32, AdamW's moments, same shape
//   /optim/step                     int64[1], AdamW's bias-correction step
//   /loader/{train,eval}/{states,offsets}  every rank's loader state blob as a row of a ragged byte array
//   /rng                            uint64, the seeds every random stream of the run is keyed by
// with run attributes on "/" (Metadata) and on every dataset a "checksum": the sum modulo 2^64 of
// mix64(global element index * 0x9e3779b97f4a7c15 ^ element bits), which each rank computes on its slice and one reduction
// combines, so it does not depend on W or on how the ranks split the data.
//
// Each rank writes its range of every unit as a hyperslab of the tensors it covers; ranks that hold the same
// range (every rank when replicated, a replica group's members under HSDP) split it evenly among
// themselves, so every byte is written, and checksummed, once.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "llmtrain/model/param_units.hpp"

namespace llmtrain::ckpt {

constexpr std::int64_t kFormatVersion = 1;

struct Metadata {
  std::int64_t step = 0;         // optimizer steps done
  std::int64_t tokens_seen = 0;  // training tokens consumed, all ranks
  std::int64_t world_size = 0;   // at save time
  std::string strategy;          // the parameter store's ("replicated", "fsdp")
  std::string config;            // the resolved configuration (TOML)
  std::string corpus;            // the training datasets, "name=path" lines (for people; the loader checks drift)
  std::uint64_t tokenizer_fingerprint = 0;
  std::int64_t format_version = kFormatVersion;
  std::string code_version;
};

// What this rank contributes. Units hold this rank's range of each unit (ParamUnit::begin); params, m and v
// have the same ranges. Loader states are every rank's blob in rank order (the same on every rank).
struct Contents {
  Metadata metadata;
  const std::vector<model::ParamUnit<float>>* params = nullptr;
  const std::vector<model::ParamUnit<float>>* first_moments = nullptr;
  const std::vector<model::ParamUnit<float>>* second_moments = nullptr;
  std::int64_t optimizer_step = 0;
  std::vector<std::string> train_loader;
  std::vector<std::uint64_t> rng;
};

struct WriteOptions {
  std::int64_t alignment = 1 << 20;  // bytes; objects of at least half of it start on a multiple
  bool file_locking = false;
  double timeout_s = 0;  // a write still running after this long ends the process (0: no limit)
};

// Collective over comm: writes `path`.tmp, syncs it to disk, renames it to `path` and syncs the directory.
// Checks the free space first. Any failure on any rank is reported by every rank and ends the job through
// MPI_Abort (see src/ckpt/h5.hpp for why it cannot be an exception). Returns the file size in bytes.
// Fault injection for tests: LLMTRAIN_FAULT=ckpt.write:<rank> kills that rank with SIGKILL mid-write;
// LLMTRAIN_FAULT=ckpt.stall:<rank> makes it wait forever mid-write (for options.timeout_s to end it);
// LLMTRAIN_FAULT=ckpt.slow:<rank> makes it wait 2 s before writing data.
std::uint64_t write_checkpoint(const std::string& path, const Contents& contents, MPI_Comm comm,
                               const WriteOptions& options = {});

// About the bytes a checkpoint of `model` takes on disk (parameters and both moments in fp32, alignment gaps,
// metadata; the loader state is kilobytes): what write_checkpoint checks the free space against, per file.
std::uint64_t space_needed(const ModelConfig& model, std::int64_t alignment);

// A dataset of an open checkpoint, as `inspect` lists it.
struct DatasetInfo {
  std::string name;  // "/model/embedding/tok_embeddings"
  std::string type;  // "f32", "u8", "u64", "i64"
  std::vector<std::uint64_t> shape;
  std::uint64_t checksum = 0;
};

// An open checkpoint file. Every member is collective over the communicator it was opened on; errors
// (unreadable file, missing dataset, checksum mismatch) are agreed and thrown as llmtrain::Error on every rank.
class Reader {
 public:
  Reader(const std::string& path, MPI_Comm comm);
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  const std::string& path() const { return path_; }
  MPI_Comm comm() const { return comm_; }
  const Metadata& metadata() const { return metadata_; }
  std::vector<DatasetInfo> datasets();
  // Recomputes every dataset's checksum (each rank reads 1/W of each); throws naming the first that differs.
  void verify();

  // Fills each unit's range [begin, end) from /model (suffix "") or /optim (suffix "m" or "v").
  void read_units(const std::string& group, std::vector<model::ParamUnit<float>>& units, const std::string& suffix);
  std::int64_t optimizer_step();
  // Every saved rank's training loader blob (empty when the checkpoint has none). A held-out loader has no
  // state to save: each run draws its held-out batches afresh (train/hooks.hpp).
  std::vector<std::string> loader_states();
  std::vector<std::uint64_t> rng();
  // A whole fp32 dataset on every rank, with its shape (for exports).
  std::vector<float> read_tensor(const std::string& name, std::vector<std::uint64_t>& shape);

 private:
  class Impl;
  std::string path_;
  MPI_Comm comm_;
  Metadata metadata_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace llmtrain::ckpt
