// A tiny SPMD program for testing the error path of run_spmd():
//   spmd_error_probe alone R     rank R throws while every other rank waits in a barrier that would
//                                never complete: the job must still end, non-zero, within seconds;
//   spmd_error_probe together R  rank R fails inside agree(): the message is printed once, every rank
//                                exits 1 without MPI_Abort.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "llmtrain/core/error.hpp"
#include "llmtrain/dist/spmd_main.hpp"

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const int failing_rank = argc > 2 ? std::atoi(argv[2]) : 0;
  return llmtrain::dist::run_spmd(argc, argv, [&](llmtrain::dist::Runtime& runtime) {
    runtime.barrier();
    if (mode == "alone") {
      if (runtime.rank() == failing_rank) LLMTRAIN_FAIL("injected failure");
      runtime.barrier();  // the failing rank never arrives here
    } else if (mode == "together") {
      llmtrain::dist::agree(runtime, [&] {
        if (runtime.rank() == failing_rank) LLMTRAIN_FAIL("injected configuration error");
      });
    } else {
      LLMTRAIN_FAIL("usage: spmd_error_probe alone|together RANK");
    }
    return 0;
  });
}
