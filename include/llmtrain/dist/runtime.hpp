// The SPMD runtime: MPI start-up and shut-down, and who this process is in the job (rank, world size,
// rank within its node, number of nodes). MPI carries bootstrap and loader-state coordination; tensor
// traffic goes through dist::Collectives.
#pragma once

#include <mpi.h>

#include <string>

namespace llmtrain::dist {

class Runtime {
 public:
  // Initialises MPI at thread level MULTIPLE where the library offers it: the main thread makes the training's
  // MPI calls and a background checkpoint writer (ckpt/background_writer.hpp) its own, on a communicator of its
  // own; loader threads never call MPI. FUNNELED is the least it accepts.
  Runtime(int& argc, char**& argv);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }  // rank among the processes of this node
  int local_size() const { return local_size_; }
  int node_count() const { return node_count_; }
  std::string hostname() const { return hostname_; }
  MPI_Comm comm() const { return MPI_COMM_WORLD; }
  // Whether a second thread may call MPI at the same time as the main one (MPI_THREAD_MULTIPLE provided).
  bool thread_multiple() const { return thread_multiple_; }

  void barrier() const;
  // Ends every rank of the job at once; used when one rank fails alone.
  [[noreturn]] void abort(int exit_code) const;

 private:
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1, node_count_ = 1;
  bool thread_multiple_ = false;
  std::string hostname_;
};

// Calls MPI and turns a failure into an llmtrain::Error naming the call.
#define LLMTRAIN_MPI_CHECK(call)                                                   \
  do {                                                                             \
    const int llmtrain_mpi_status_ = (call);                                       \
    if (llmtrain_mpi_status_ != MPI_SUCCESS)                                       \
      ::llmtrain::dist::throw_mpi_error(#call, llmtrain_mpi_status_, __FILE__, __LINE__); \
  } while (0)

[[noreturn]] void throw_mpi_error(const char* call, int status, const char* file, int line);

}  // namespace llmtrain::dist
