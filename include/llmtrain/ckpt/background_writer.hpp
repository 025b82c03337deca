// Asynchronous checkpoints: the training loop copies what a checkpoint holds into staging buffers (a
// snapshot) and goes on; a thread of this rank writes the file from them with write_checkpoint(), with every
// guarantee of a synchronous write (.tmp + rename, checksums, agreed errors), overlapped with later steps.
//
// Why a thread, not a helper process: the snapshot is a memcpy into memory the writer already sees, and a
// thread shares the rank's MPI job, so parallel HDF5 runs on the ranks' own communicator; a process would
// need the snapshot shipped through shared memory and an MPI world of its own (MPI_Comm_spawn) to write one
// file collectively. The price is MPI_THREAD_MULTIPLE (dist::Runtime asks for it; perf/RESULTS.md measures
// what it costs the training's collectives) and a duplicated communicator, so the writer's collectives never
// match the training's. Debian's HDF5 is not thread-safe: while a write is in flight only this thread calls
// HDF5 (nothing else in a training run does).
//
// At most one write is in flight: start() first waits for the previous one. A failure is kept and rethrown
// by the main thread (rethrow_failure), which the job does in an agreement, so every rank ends together.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "llmtrain/ckpt/checkpoint.hpp"

namespace llmtrain::ckpt {

class BackgroundWriter {
 public:
  // Collective over comm (duplicates it for the writer thread). The process must provide MPI_THREAD_MULTIPLE.
  explicit BackgroundWriter(MPI_Comm comm);
  ~BackgroundWriter();  // waits for the write in flight
  BackgroundWriter(const BackgroundWriter&) = delete;
  BackgroundWriter& operator=(const BackgroundWriter&) = delete;

  // Staging bytes on one rank of W for a model of `parameters` parameters: its share of the parameters and
  // both moments, in fp32 (the snapshot holds only the part of each unit this rank writes).
  static double staging_bytes(std::int64_t parameters, int world_size);

  struct Started {
    double blocked_s = 0;   // waiting for the previous write
    double snapshot_s = 0;  // copying into the staging buffers
  };
  // Collective over the communicator: waits for the write in flight, copies this rank's part of `contents`
  // into the staging buffers (allocated at the first call) and starts writing them to `path`. After a
  // successful write, `after_write(bytes, seconds)` runs on the writer thread (the job writes LATEST there).
  Started start(const std::string& path, const Contents& contents, const WriteOptions& options,
                std::function<void(std::uint64_t, double)> after_write);
  // Blocks until no write is in flight; returns the seconds it waited. Local.
  double wait();
  bool busy() const { return thread_.joinable() && !done_.load(); }
  // Rethrows the failure of the last write (once); nothing when it succeeded or is still running. Local.
  void rethrow_failure();

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::vector<std::pair<std::int64_t, std::int64_t>> owned_;  // per unit, from the first snapshot
  std::vector<model::ParamUnit<float>> params_, first_moments_, second_moments_;
  Contents staged_;
  std::thread thread_;
  std::atomic<bool> done_{true};
  std::exception_ptr failure_;
};

}  // namespace llmtrain::ckpt
