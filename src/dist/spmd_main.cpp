// run_spmd() and agree(): see include/llmtrain/dist/spmd_main.hpp for the error-path contract.
#include "llmtrain/dist/spmd_main.hpp"

#include <cstdio>
#include <exception>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "llmtrain/core/error.hpp"
#include "llmtrain/core/log.hpp"

namespace llmtrain::dist {
namespace {

// Thrown on every rank by agree(); run_spmd prints it once (on the rank that failed first).
class JobWideError : public Error {
 public:
  JobWideError(const std::string& message, bool print_here) : Error(message, __FILE__, __LINE__), print_here(print_here) {}
  bool print_here;
};

}  // namespace

void agree(const Runtime& runtime, const std::function<void()>& step) {
  std::string message;
  try {
    step();
  } catch (const std::exception& e) {
    message = e.what();
  }
  const int mine = message.empty() ? runtime.size() : runtime.rank();
  int first_failure = runtime.size();
  LLMTRAIN_MPI_CHECK(MPI_Allreduce(&mine, &first_failure, 1, MPI_INT, MPI_MIN, runtime.comm()));
  if (first_failure == runtime.size()) return;
  int length = static_cast<int>(message.size());
  LLMTRAIN_MPI_CHECK(MPI_Bcast(&length, 1, MPI_INT, first_failure, runtime.comm()));
  message.resize(static_cast<std::size_t>(length));
  LLMTRAIN_MPI_CHECK(MPI_Bcast(message.data(), length, MPI_CHAR, first_failure, runtime.comm()));
  throw JobWideError(message, runtime.rank() == first_failure);
}

int run_spmd_tool(int& argc, char**& argv, const char* usage, const std::function<int(Runtime&)>& body) {
  if (argc > 1 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
    std::fputs(usage, stdout);
    return 0;
  }
  return run_spmd(argc, argv, body);
}

int run_spmd(int& argc, char**& argv, const std::function<int(Runtime&)>& body) {
  // Messages start with the program's own name (llmtrain, llmtrain-ckpt, ...), as the user typed it.
  const std::string program = argc > 0 ? std::filesystem::path(argv[0]).filename().string() : "llmtrain";
  std::unique_ptr<Runtime> runtime;
  try {
    runtime = std::make_unique<Runtime>(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: cannot start MPI: %s\n", program.c_str(), e.what());
    return 1;
  }
  try {
    return body(*runtime);
  } catch (const JobWideError& e) {
    log_fatal_to_file(e.what());  // every rank's log says why it ended, though the console says it once
    if (e.print_here) std::fprintf(stderr, "%s: error: %s\n", program.c_str(), e.what());
    std::fflush(stderr);
    return 1;
  } catch (const std::exception& e) {
    // Ranks are worth naming only where there are several.
    const std::string message =
        runtime->size() == 1 ? cat("error: ", e.what())
                             : cat("error on rank ", runtime->rank(), " of ", runtime->size(), " (",
                                   runtime->hostname(), "): ", e.what());
    log_fatal_to_file(message);  // before MPI_Abort, which ends this process too
    std::fprintf(stderr, "%s: %s\n", program.c_str(), message.c_str());
    std::fflush(stderr);
    if (runtime->size() > 1) runtime->abort(1);
    return 1;
  }
}

}  // namespace llmtrain::dist
