// Collective operations on tensors, behind one interface with one implementation per transport:
// MPI on the host (src/dist/mpi_collectives.cpp) and NCCL on CUDA devices (src/dist/cuda/). The trainer
// and the coming FSDP layer use only this interface, so the transport is a configuration choice.
//
// All calls are collective over the communicator the object was made for: every rank calls them in the
// same order with the same counts. Buffers live where the backend expects them (host memory for MPI,
// device memory for NCCL).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace llmtrain::dist {

class Runtime;

class Collectives {
 public:
  virtual ~Collectives() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string name() const = 0;  // "mpi", "nccl"

  // In place: data[i] = sum over ranks of data[i].
  virtual void all_reduce_sum(float* data, std::size_t count) = 0;
  // In place: data[i] = mean over ranks of data[i].
  virtual void all_reduce_mean(float* data, std::size_t count) = 0;
  // Rank r's `count` values land at out[r * count, (r + 1) * count) on every rank.
  virtual void all_gather(const float* in, float* out, std::size_t count) = 0;
  // in holds size() blocks of `count` values; rank r receives the sum over ranks of block r.
  virtual void reduce_scatter_sum(const float* in, float* out, std::size_t count) = 0;
  virtual void broadcast(float* data, std::size_t count, int root) = 0;
  // Blocks until all queued operations are complete (a no-op for MPI, a stream sync for NCCL).
  virtual void synchronize() = 0;
};

// backend: "mpi" or "nccl" ("auto" picks nccl when built with CUDA and a device is visible, else mpi).
std::unique_ptr<Collectives> make_collectives(const std::string& backend, const Runtime& runtime);

}  // namespace llmtrain::dist
