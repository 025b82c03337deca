// main() for GoogleTest programs run under mpirun: MPI is up for the whole run, and only rank 0 prints
// the usual report (a failing rank still prints its failures and makes mpirun exit non-zero).
#include <gtest/gtest.h>

#include "llmtrain/dist/runtime.hpp"

llmtrain::dist::Runtime* g_runtime = nullptr;

int main(int argc, char** argv) {
  llmtrain::dist::Runtime runtime(argc, argv);
  g_runtime = &runtime;
  ::testing::InitGoogleTest(&argc, argv);
  if (runtime.rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  return RUN_ALL_TESTS();
}
