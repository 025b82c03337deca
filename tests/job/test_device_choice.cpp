// train.device's resolution (job/device_choice.hpp) for every setting against what a rank may see: a build
// without CUDA, no device, fewer devices than ranks on the node, enough devices, with and without the device
// training step; the error texts name both counts. The run's own path (mpirun, exit status 1 on every rank)
// is tested by llmtrain_device_cuda_np2 in tests/apps.
#include <gtest/gtest.h>

#include <string>

#include "device_choice.hpp"
#include "llmtrain/core/error.hpp"

namespace {

using llmtrain::job::Device;
using llmtrain::job::DeviceChoice;
using llmtrain::job::resolve_device;

llmtrain::dist::DeviceQuery seen(bool cuda_build, int devices, int local_ranks) {
  llmtrain::dist::DeviceQuery q;
  q.cuda_build = cuda_build;
  q.device_count = devices;
  q.local_ranks = local_ranks;
  if (!cuda_build) q.reason = "this build has no CUDA (LLMTRAIN_ENABLE_CUDA=OFF)";
  if (devices > 0) {
    q.device = 0;
    q.name = "NVIDIA H100 80GB HBM3";
  }
  return q;
}

std::string error_of(const std::string& setting, const llmtrain::dist::DeviceQuery& q, bool device_training,
                     const std::string& unsupported = "") {
  try {
    resolve_device(setting, q, device_training, unsupported);
  } catch (const llmtrain::Error& e) {
    return e.what();
  }
  return "";
}

TEST(ResolveDevice, CpuIsCpuWhateverIsSeen) {
  for (const bool build : {false, true})
    for (const int devices : {0, 1, 8})
      for (const bool training : {false, true}) {
        const DeviceChoice c = resolve_device("cpu", seen(build, build ? devices : 0, 2), training, "");
        EXPECT_EQ(c.device, Device::cpu);
        EXPECT_EQ(c.why, "train.device = \"cpu\"");
        EXPECT_FALSE(c.device_unused);
        EXPECT_EQ(c.tensors(), llmtrain::dist::TensorPlace::host);
      }
}

TEST(ResolveDevice, CudaWithoutACudaBuildIsAnErrorNamingTheCounts) {
  for (const bool training : {false, true})
    EXPECT_EQ(error_of("cuda", seen(false, 0, 2), training),
              "train.device = \"cuda\": this rank sees 0 CUDA devices (2 ranks on this node): this build has no CUDA "
              "(LLMTRAIN_ENABLE_CUDA=OFF); use \"cpu\" or \"auto\", or a build with CUDA");
}

TEST(ResolveDevice, CudaWithoutADeviceIsAnErrorNamingTheCounts) {
  llmtrain::dist::DeviceQuery q = seen(true, 0, 2);
  q.reason = "no CUDA-capable device is detected";
  for (const bool training : {false, true})
    EXPECT_EQ(error_of("cuda", q, training),
              "train.device = \"cuda\": this rank sees 0 CUDA devices (2 ranks on this node): no CUDA-capable device "
              "is detected; run where each rank has a GPU (CUDA_VISIBLE_DEVICES), or use \"cpu\" or \"auto\"");
  q.reason.clear();  // a runtime that counted 0 without an error
  EXPECT_EQ(error_of("cuda", seen(true, 0, 1), true).rfind(
                "train.device = \"cuda\": this rank sees 0 CUDA devices (1 rank on this node); run where", 0),
            0u);
}

TEST(ResolveDevice, CudaWithMoreRanksThanDevicesIsAnError) {
  for (const bool training : {false, true})
    EXPECT_EQ(error_of("cuda", seen(true, 1, 2), training),
              "train.device = \"cuda\": this rank sees 1 CUDA device (2 ranks on this node), and training on GPUs "
              "takes one per rank; launch at most 1 per node (mpirun --map-by ppr:1:node, srun --ntasks-per-node=1), "
              "or use \"cpu\"");
  EXPECT_NE(error_of("cuda", seen(true, 4, 8), true).find("sees 4 CUDA devices (8 ranks on this node)"),
            std::string::npos);
}

// Slurm's --gpus-per-task=1: each of a node's ranks sees one device, its own (CUDA_VISIBLE_DEVICES narrowed).
TEST(ResolveDevice, CudaWithAnOwnDevicePerRankIsCuda) {
  auto own = seen(true, 1, 8);
  own.own_device = true;
  const DeviceChoice c = resolve_device("cuda", own, true, "");
  EXPECT_EQ(c.device, Device::cuda);
  EXPECT_EQ(c.why, "train.device = \"cuda\": a CUDA device of its own (CUDA_VISIBLE_DEVICES) for each of 8 ranks on "
                   "this node");
  EXPECT_EQ(resolve_device("auto", own, true, "").device, Device::cuda);
  EXPECT_NE(error_of("cuda", own, false).find("device training step is not complete"), std::string::npos);
}

TEST(ResolveDevice, CudaWithADevicePerRankNeedsTheDeviceTrainingStep) {
  EXPECT_EQ(error_of("cuda", seen(true, 2, 2), false),
            "train.device = \"cuda\": this build's device training step is not complete yet (issue 28); use \"cpu\"");
  for (const int ranks : {1, 2, 4}) {  // more devices than ranks is fine: each rank takes its own
    const DeviceChoice c = resolve_device("cuda", seen(true, 4, ranks), true, "");
    EXPECT_EQ(c.device, Device::cuda);
    EXPECT_FALSE(c.device_unused);
    EXPECT_EQ(c.tensors(), llmtrain::dist::TensorPlace::device);
  }
  EXPECT_EQ(resolve_device("cuda", seen(true, 4, 2), true, "").why,
            "train.device = \"cuda\": 4 CUDA devices for 2 ranks on this node");
}

TEST(ResolveDevice, AutoIsCpuWithoutCudaOrDevices) {
  DeviceChoice c = resolve_device("auto", seen(false, 0, 2), true, "");
  EXPECT_EQ(c.device, Device::cpu);
  EXPECT_FALSE(c.device_unused);
  EXPECT_EQ(c.why, "train.device = \"auto\": this rank sees 0 CUDA devices (2 ranks on this node): this build has no "
                   "CUDA (LLMTRAIN_ENABLE_CUDA=OFF): training on the CPU");
  c = resolve_device("auto", seen(true, 0, 1), true, "");
  EXPECT_EQ(c.device, Device::cpu);
  EXPECT_FALSE(c.device_unused);
}

TEST(ResolveDevice, AutoIsCpuWithANoteWhereADeviceGoesUnused) {
  DeviceChoice c = resolve_device("auto", seen(true, 1, 2), true, "");  // ranks share a device: never doubled up
  EXPECT_EQ(c.device, Device::cpu);
  EXPECT_TRUE(c.device_unused);
  EXPECT_EQ(c.why, "train.device = \"auto\": this rank sees 1 CUDA device (2 ranks on this node), and training on "
                   "GPUs takes one per rank: training on the CPU");
  c = resolve_device("auto", seen(true, 8, 8), false, "");  // the device step is not in this build
  EXPECT_EQ(c.device, Device::cpu);
  EXPECT_TRUE(c.device_unused);
  EXPECT_EQ(c.why, "train.device = \"auto\": this rank sees 8 CUDA devices (8 ranks on this node), but this build's "
                   "device training step is not complete yet (issue 28): training on the CPU");
}

TEST(ResolveDevice, AutoIsCudaWhereCudaWouldBe) {
  const DeviceChoice c = resolve_device("auto", seen(true, 8, 8), true, "");
  EXPECT_EQ(c.device, Device::cuda);
  EXPECT_FALSE(c.device_unused);
  EXPECT_EQ(c.why, "train.device = \"auto\": 8 CUDA devices for 8 ranks on this node");
}

TEST(DeviceUnsupported, NamesTheSettingsTheDevicePathDoesNotTake) {
  llmtrain::Config config;
  config.parallel.strategy = "replicated";
  config.parallel.comm_dtype = "fp32";
  EXPECT_EQ(llmtrain::job::device_unsupported(config), "");
  for (const char* strategy : {"fsdp", "hsdp"}) {
    config.parallel.strategy = strategy;
    EXPECT_EQ(llmtrain::job::device_unsupported(config),
              std::string("parallel.strategy = \"") + strategy +
                  "\" keeps its shards in host memory in this build (the device stores of fsdp and hsdp come with the "
                  "NCCL work of issue 29); use parallel.strategy = \"replicated\"");
  }
  config.parallel.strategy = "replicated";
  config.parallel.comm_dtype = "bf16";
  EXPECT_EQ(llmtrain::job::device_unsupported(config),
            "parallel.comm_dtype = \"bf16\" rounds gradients with host wire kernels, and a run on devices all-reduces "
            "them in fp32 in this build; use parallel.comm_dtype = \"fp32\"");
  config.parallel.comm_dtype = "fp32";
  config.train.sample_every = 100;
  EXPECT_EQ(llmtrain::job::device_unsupported(config),
            "train.sample_every = 100 samples with the host decoder (its key/value cache is host memory) in this "
            "build; use train.sample_every = 0");
}

TEST(ResolveDevice, CudaWithSettingsTheDevicePathDoesNotTakeIsAnError) {
  const std::string why = "parallel.strategy = \"fsdp\" keeps its shards in host memory";
  EXPECT_EQ(error_of("cuda", seen(true, 2, 2), true, why),
            "train.device = \"cuda\": " + why + ", or train.device = \"cpu\"");
  // Without the device step, that is the error (as before the settings were asked about).
  EXPECT_NE(error_of("cuda", seen(true, 2, 2), false, why).find("not complete yet"), std::string::npos);
  EXPECT_EQ(resolve_device("cpu", seen(true, 2, 2), true, why).device, Device::cpu);
  const DeviceChoice c = resolve_device("auto", seen(true, 2, 2), true, why);
  EXPECT_EQ(c.device, Device::cpu);
  EXPECT_TRUE(c.device_unused);
  EXPECT_EQ(c.why, "train.device = \"auto\": this rank sees 2 CUDA devices (2 ranks on this node), but " + why +
                       ": training on the CPU");
}

TEST(ResolveDevice, UnknownSettingIsRefused) {
  EXPECT_EQ(error_of("gpu", seen(true, 1, 1), true), "train.device: \"gpu\" is not one of \"auto\", \"cpu\", \"cuda\"");
}

TEST(DescribeDevice, NamesTheDeviceAndItsMemory) {
  llmtrain::dist::DeviceQuery q = seen(true, 1, 1);
  q.cc_major = 9;
  q.sm_count = 132;
  q.free_bytes = std::uint64_t(79) << 30;
  q.total_bytes = std::uint64_t(80) << 30;
  EXPECT_EQ(llmtrain::job::describe_device(q),
            "NVIDIA H100 80GB HBM3 (device 0, compute capability 9.0, 132 SMs, 79.00 GiB free of 80.00 GiB)");
  EXPECT_EQ(llmtrain::job::describe_device(seen(true, 0, 1)), "no CUDA device");
}

}  // namespace
