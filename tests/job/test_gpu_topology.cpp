// The preflight's GPU topology from sysfs (job/gpu_check.hpp) on a made-up tree: a GPU on NUMA node 1, CPUs of
// nodes 0 and 1, HCAs on both; CUDA's capital hex bus id against sysfs's small letters; an unknown GPU.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gpu_check.hpp"

namespace {

namespace fs = std::filesystem;

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

class GpuTopologyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("llmtrain-sysfs-" + std::to_string(::getpid()));
    write(root_ / "bus/pci/devices/0000:1b:00.0/numa_node", "1\n");
    for (const int cpu : {0, 1}) fs::create_directories(root_ / ("devices/system/cpu/cpu" + std::to_string(cpu)) / "node0");
    for (const int cpu : {60, 61}) fs::create_directories(root_ / ("devices/system/cpu/cpu" + std::to_string(cpu)) / "node1");
    write(root_ / "class/infiniband/mlx5_0/device/numa_node", "0\n");
    write(root_ / "class/infiniband/mlx5_5/device/numa_node", "1\n");
    write(root_ / "class/infiniband/mlx5_4/device/numa_node", "1\n");
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

TEST_F(GpuTopologyTest, FindsTheGpusNodeTheRanksNodesAndTheHcasNearTheGpu) {
  const auto far = llmtrain::job::gpu_topology(root_.string(), "0000:1B:00.0", {0, 1});
  EXPECT_EQ(far.gpu_numa, 1);
  EXPECT_EQ(far.rank_numa, std::vector<int>{0});
  EXPECT_EQ(far.hcas, (std::vector<std::string>{"mlx5_4", "mlx5_5"}));
  const auto near = llmtrain::job::gpu_topology(root_.string(), "0000:1B:00.0", {1, 60, 61});
  EXPECT_EQ(near.rank_numa, (std::vector<int>{0, 1}));
}

TEST_F(GpuTopologyTest, AnUnknownGpuHasNoNodeAndNoHcas) {
  const auto unknown = llmtrain::job::gpu_topology(root_.string(), "0000:AA:00.0", {0});
  EXPECT_EQ(unknown.gpu_numa, -1);
  EXPECT_TRUE(unknown.hcas.empty());
  EXPECT_EQ(unknown.rank_numa, std::vector<int>{0});
}

}  // namespace
