// MPI bootstrap. Local rank and node count come from splitting COMM_WORLD by shared memory, which is
// what "a node" means to NCCL device selection and to per-node launch settings.
#include "llmtrain/dist/runtime.hpp"

#include <unistd.h>

#include <cstdio>

#include "llmtrain/core/error.hpp"

namespace llmtrain::dist {

void throw_mpi_error(const char* call, int status, const char* file, int line) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(status, text, &length);
  throw_error(file, line, cat("MPI call failed: ", call, ": ", text));
}

Runtime::Runtime(int& argc, char**& argv) {
  int provided = 0;
  // Asked for whatever the configuration says (it is read after MPI starts). With Open MPI 4.1 it costs small
  // messages and all-gathers nothing measurable; a 16 MiB MPI_Allreduce, which training does not use, about
  // 13 % (perf/RESULTS.md, "Asynchronous checkpoints and MPI_THREAD_MULTIPLE").
  LLMTRAIN_MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
  LLMTRAIN_CHECK(provided >= MPI_THREAD_FUNNELED, "the MPI library provides thread level ", provided,
                 ", llmtrain needs MPI_THREAD_FUNNELED");
  thread_multiple_ = provided == MPI_THREAD_MULTIPLE;
  // Errors come back as codes, which LLMTRAIN_MPI_CHECK turns into exceptions with the call's name.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);

  MPI_Comm node;
  LLMTRAIN_MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node));
  MPI_Comm_rank(node, &local_rank_);
  MPI_Comm_size(node, &local_size_);
  MPI_Comm_free(&node);
  const int is_node_leader = local_rank_ == 0 ? 1 : 0;
  LLMTRAIN_MPI_CHECK(MPI_Allreduce(&is_node_leader, &node_count_, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));

  char host[256] = {};
  gethostname(host, sizeof host - 1);
  hostname_ = host;
}

Runtime::~Runtime() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

void Runtime::barrier() const { LLMTRAIN_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); }

void Runtime::abort(int exit_code) const {
  std::fflush(stdout);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);  // MPI_Abort does not return; this satisfies [[noreturn]] if it ever does
}

}  // namespace llmtrain::dist
