// Collective operations on tensors, behind one interface with one implementation per transport: MPI on
// the host (src/dist/mpi_collectives.cpp) and NCCL on CUDA devices (src/dist/cuda/). The trainer and the
// FSDP layer use only this interface, so the transport is a configuration choice. docs/collectives.md
// defines the semantics, bf16 sums included.
//
// Every tensor operation is asynchronous: it returns a Request, and its buffers must stay untouched until
// the request completes. All calls are collective over the communicator the object stands for: every
// member calls them in the same order with the same counts and types. Tensor buffers live where the
// backend expects them (host memory for MPI, device memory for NCCL); agree_* always take host memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "llmtrain/dist/dtype.hpp"
#include "llmtrain/dist/request.hpp"

namespace llmtrain::dist {

class Runtime;

class Collectives {
 public:
  virtual ~Collectives() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string name() const = 0;  // "mpi", "nccl"

  // In place: data[i] = sum over members of data[i].
  virtual Request all_reduce_sum(void* data, std::size_t count, DType type) = 0;
  // Member r's `count` values land at out[r * count, (r + 1) * count) on every member.
  virtual Request all_gather(const void* in, void* out, std::size_t count, DType type) = 0;
  // in holds size() blocks of `count` values; member r receives the sum over members of block r.
  virtual Request reduce_scatter_sum(const void* in, void* out, std::size_t count, DType type) = 0;
  // data on every member becomes data on member `root`.
  virtual Request broadcast(void* data, std::size_t count, DType type, int root) = 0;

  // Sub-communicator of the members passing the same color (>= 0), ranked by key, ties by rank here.
  // Collective over this communicator; the result is independent of it (either may be destroyed first).
  virtual std::unique_ptr<Collectives> split(int color, int key) = 0;
  // Drives every outstanding request of this communicator: MPI over TCP progresses only inside MPI calls,
  // so a caller overlapping compute polls this between pieces of work.
  virtual void progress() = 0;

  // Host-side agreement on small scalars (loss sums, token counts, stop and error flags): blocking, over MPI
  // on host memory in every backend. The uint64 sum wraps modulo 2^64 (checksums).
  virtual void agree_sum(double* values, std::size_t count) = 0;
  virtual void agree_max(double* values, std::size_t count) = 0;
  virtual void agree_sum(std::uint64_t* values, std::size_t count) = 0;
};

// Where the tensors a backend carries live. NCCL takes device memory only, MPI (not CUDA-aware in Debian's
// build) host memory only.
enum class TensorPlace { host, device };

// The backend ("mpi" or "nccl") that parallel.backend = `backend` means for tensors in `tensors`: "auto" is
// the one that carries tensors where they live (nccl for device tensors, which train.device = "cuda" puts
// there; mpi for host tensors, whether or not a GPU is visible). "nccl" for host tensors, "mpi" for device
// tensors, device tensors or "nccl" in a build without CUDA, and an unknown name are errors naming the setting.
std::string collectives_backend(const std::string& backend, TensorPlace tensors);

// The collectives_backend() of `backend` and `tensors`, spanning all ranks of the runtime, on a communicator of
// its own. collective_timeout_s (parallel.collective_timeout_s; 0: none): NCCL only, an operation still
// incomplete that long into a wait aborts its communicator and throws (src/dist/cuda/nccl_collectives.cpp).
// MPI waits have no limit: a rank that dies ends the job through the launcher.
std::unique_ptr<Collectives> make_collectives(const std::string& backend, const Runtime& runtime,
                                              TensorPlace tensors = TensorPlace::host, double collective_timeout_s = 0);

}  // namespace llmtrain::dist
