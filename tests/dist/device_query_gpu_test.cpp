// dist::query_devices where a GPU is visible (label gpu; skipped without one): one process is the only rank of
// its node, so it takes device 0 and reports its name, compute capability, SMs and memory, and device 0 becomes
// the current device. A job's train.device = "cuda" reads exactly these figures (src/job/device_choice.hpp).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "llmtrain/dist/device_query.hpp"

namespace {

TEST(DeviceQuery, TheOnlyRankOfItsNodeTakesDeviceZero) {
  int argc = 0;
  char** argv = nullptr;
  const llmtrain::dist::Runtime runtime(argc, argv);  // a singleton MPI process: rank 0 of 1
  const llmtrain::dist::DeviceQuery seen = llmtrain::dist::query_devices(runtime);
  int devices = 0, current = -1;
  ASSERT_EQ(cudaGetDeviceCount(&devices), cudaSuccess);
  EXPECT_TRUE(seen.cuda_build);
  EXPECT_EQ(seen.device_count, devices);
  EXPECT_EQ(seen.local_rank, 0);
  EXPECT_EQ(seen.local_ranks, 1);
  EXPECT_EQ(seen.reason, "");
  ASSERT_TRUE(seen.has_device());
  EXPECT_EQ(seen.device, 0);
  cudaDeviceProp properties{};
  ASSERT_EQ(cudaGetDeviceProperties(&properties, 0), cudaSuccess);
  EXPECT_EQ(seen.name, properties.name);
  EXPECT_EQ(seen.cc_major, properties.major);
  EXPECT_EQ(seen.cc_minor, properties.minor);
  EXPECT_EQ(seen.sm_count, properties.multiProcessorCount);
  EXPECT_GT(seen.free_bytes, 0u);
  EXPECT_LE(seen.free_bytes, seen.total_bytes);
  EXPECT_LE(seen.total_bytes, properties.totalGlobalMem);
  ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
  EXPECT_EQ(current, 0);
}

}  // namespace
