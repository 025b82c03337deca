// The memory check before allocation: MemAvailable is parsed (and malformed /proc/meminfo is an error); a
// run whose estimate exceeds what a rank may use is refused with the estimate, the available memory, where
// that figure came from and the settings to change (only those that would change something, with the fsdp rank
// count at which the estimate fits); train.check_memory = false makes it a warning. The dry run planning for
// another world size states what each of its ranks would get here. On a CUDA device the device estimate is
// compared with the device's free memory.
#include <gtest/gtest.h>

#include "llmtrain/config/config.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/model/model.hpp"
#include "memory_check.hpp"

namespace llmtrain::job {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

TEST(MemoryCheck, ParsesMemAvailable) {
  EXPECT_EQ(parse_mem_available("MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   2097152 kB\n"),
            2.0 * kGiB);
  EXPECT_THROW(parse_mem_available("MemTotal: 1 kB\n"), Error);
  EXPECT_THROW(parse_mem_available("MemAvailable: lots\n"), Error);
}

TEST(MemoryCheck, ThisHostHasSomeMemoryForEachRank) {
  const AvailableMemory one = available_memory("here", 1), four = available_memory("here", 4);
  EXPECT_GT(one.bytes_per_rank, 0);
  EXPECT_NE(one.described().find("on host here, shared by its 1 rank"), std::string::npos) << one.described();
  EXPECT_NE(four.described().find("shared by its 4 ranks"), std::string::npos) << four.described();
}

// The dry run planning for more ranks than run it does not say the memory is shared by the ranks it has.
TEST(MemoryCheck, TheDryRunStatesWhatAPlannedWorldSizeGets) {
  const AvailableMemory here{16 * kGiB, "16.00 GiB available (MemAvailable) on host n1", 1};
  EXPECT_EQ(available_here(here, 1, 1), "16.00 GiB per rank (16.00 GiB available (MemAvailable) on host n1, "
                                        "shared by its 1 rank)");
  const std::string planned = available_here(here, 8, 1);
  EXPECT_EQ(planned.find("shared by"), std::string::npos) << planned;
  EXPECT_NE(planned.find("16.00 GiB per rank with one of the 8 ranks per node like this one, 2.00 GiB with all of "
                         "them on it"), std::string::npos) << planned;
}

// A small model whose replicated state is a few MiB, and a configuration for it.
ModelConfig small_model() {
  ModelConfig model;
  model.vocab_size = 1000;
  model.d_model = 64;
  model.n_layers = 4;
  model.n_heads = 4;
  model.n_kv_heads = 4;
  model.d_ff = 128;
  return model;
}

// A preset's configuration, every key resolved (a default-constructed Config leaves them unset).
Config preset(const std::string& name) { return load_config(std::string(LLMTRAIN_SOURCE_DIR) + "/inputs/" + name); }

Config small_config() {
  Config config = preset("tiny.toml");
  config.train.check_memory = true;
  config.train.batch_size = 8;
  config.data.seq_len = 128;
  config.train.recompute = "none";
  config.parallel.strategy = "replicated";
  return config;
}

std::string refusal(const Config& config, const ModelConfig& model, int world, const AvailableMemory& available) {
  try {
    check_memory(config, model, world, available);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "a run that does not fit was allowed";
  return "";
}

TEST(MemoryCheck, ARunThatFitsPasses) {
  const Config config = small_config();
  const double needed = estimate_memory(config, small_model(), 1).total("replicated");
  check_memory(config, small_model(), 1, {needed, "test", 1});
}

TEST(MemoryCheck, ARunThatDoesNotFitIsRefusedWithTheNumbersAndTheSettings) {
  const Config config = small_config();
  const ModelConfig model = small_model();
  const MemoryEstimate estimate = estimate_memory(config, model, 2);
  // Room for the state and a quarter of the activations.
  const AvailableMemory available{estimate.state_replicated + estimate.activations / 4,
                                  "4.00 GiB available (MemAvailable) on host n1", 2};
  const std::string what = refusal(config, model, 2, available);
  for (const std::string& part :
       {std::string("not enough memory: this run needs about ") + format_bytes(estimate.data_parallel()) + " per rank",
        std::string("parallel.strategy = \"replicated\" on 2 ranks"),
        "AdamW moments " + format_bytes(estimate.state_replicated) + " + activations " +
            format_bytes(estimate.activations),
        "but " + format_bytes(available.bytes_per_rank) + " is available per rank",
        std::string("on host n1, shared by its 2 ranks"),
        std::string("lower train.batch_size from 8 to 2 or less"), std::string("set train.recompute = \"blocks\""),
        std::string("lower data.seq_len from 128 to 32 or less"), std::string("run fewer ranks per node"),
        std::string("or set train.check_memory = false to start anyway")})
    EXPECT_NE(what.find(part), std::string::npos) << part << "\n" << what;
  // The override starts anyway (the warning is logged).
  Config anyway = config;
  anyway.train.check_memory = false;
  check_memory(anyway, model, 2, available);
}

// Only what would change something: no batch size already 1, no recompute already "blocks", no ranks per node
// on a host with one, and nothing about activations when the state alone does not fit.
TEST(MemoryCheck, TheRefusalSuggestsNoSettingThatIsAlreadySetOrCannotHelp) {
  Config config = small_config();
  config.train.batch_size = 1;
  config.train.recompute = "blocks";
  const ModelConfig model = small_model();
  const MemoryEstimate estimate = estimate_memory(config, model, 1);
  const std::string tight = refusal(config, model, 1, {estimate.data_parallel() - 1, "host n1", 1});
  for (const char* absent : {"train.batch_size", "train.recompute", "ranks per node"})
    EXPECT_EQ(tight.find(absent), std::string::npos) << absent << "\n" << tight;
  EXPECT_NE(tight.find("lower data.seq_len from 128 to 127 or less"), std::string::npos) << tight;
  config.train.batch_size = 8;
  config.train.recompute = "none";
  const std::string state_too_big = refusal(config, model, 1, {estimate.state_replicated / 2, "host n1", 1});
  for (const char* absent : {"train.batch_size", "train.recompute", "data.seq_len"})
    EXPECT_EQ(state_too_big.find(absent), std::string::npos) << absent << "\n" << state_too_big;
}

// The rank count suggested for fsdp is the fewest at which the dry run's estimate fits.
TEST(MemoryCheck, TheRefusalNamesTheFsdpRankCountThatFits) {
  Config config = small_config();
  config.train.batch_size = 1;
  config.data.seq_len = 8;
  ModelConfig model = small_model();
  model.n_layers = 16;  // the state outweighs the window of gathered units
  Config fsdp = config;
  fsdp.parallel.strategy = "fsdp";
  const double budget = estimate_memory(fsdp, model, 4).total("fsdp");
  ASSERT_GT(estimate_memory(config, model, 1).data_parallel(), budget);
  const std::string what = refusal(config, model, 1, {budget, "host n1", 1});
  int fits = 1;
  while (estimate_memory(fsdp, model, fits).total("fsdp") > budget) ++fits;
  ASSERT_GT(fits, 1);
  EXPECT_NE(what.find(cat("set parallel.strategy = \"fsdp\" and run on ", fits, " ranks or more (about ",
                          format_bytes(estimate_memory(fsdp, model, fits).total("fsdp")),
                          " per rank by the estimate; llmtrain --dry-run --world-size ", fits, " shows it)")),
            std::string::npos)
      << fits << "\n" << what;
  // Already fsdp on too few ranks: more ranks.
  const std::string more = refusal(fsdp, model, 1, {budget, "host n1", 1});
  EXPECT_NE(more.find(cat("run on ", fits, " ranks or more")), std::string::npos) << more;
  EXPECT_EQ(more.find("set parallel.strategy"), std::string::npos) << more;
  // No rank count helps (the window and activations alone exceed the memory): none is named.
  const std::string hopeless = refusal(fsdp, model, 1, {1.0, "host n1", 1});
  EXPECT_EQ(hopeless.find("ranks or more"), std::string::npos) << hopeless;
}

// inputs/llama-7b.toml on one rank (the replicated state is 103 GiB): fsdp over the ranks where it fits.
TEST(MemoryCheck, Llama7bOnOneRankIsToldHowManyFsdpRanksItNeeds) {
  const Config config = preset("llama-7b.toml");
  const ModelConfig model = config.model.resolved(50257, config.data.seq_len);  // the GPT-2 tokenizer's size
  ASSERT_EQ(config.parallel.strategy, "replicated");
  const std::string what = refusal(config, model, 1, {62 * kGiB, "62.00 GiB available (MemAvailable) on host n1", 1});
  EXPECT_NE(what.find("set parallel.strategy = \"fsdp\" and run on 2 ranks or more"), std::string::npos) << what;
  for (const char* absent : {"train.batch_size", "train.recompute", "data.seq_len", "ranks per node"})
    EXPECT_EQ(what.find(absent), std::string::npos) << absent << "\n" << what;
}

TEST(MemoryCheck, TheEstimateIsTheDryRunsAndShrinksWithRecomputeAndSharding) {
  Config config = preset("tiny.toml");
  config.train.batch_size = 4;
  config.data.seq_len = 128;
  config.train.recompute = "none";
  const ModelConfig model = small_model();
  const MemoryEstimate whole = estimate_memory(config, model, 2);
  EXPECT_EQ(whole.state_replicated, 16.0 * double(model.parameter_count()));
  EXPECT_EQ(whole.fsdp_state, whole.state_replicated / 2);
  EXPECT_GT(whole.fsdp_window, 0.0);
  EXPECT_EQ(whole.total("replicated"), whole.data_parallel());
  EXPECT_EQ(whole.total("fsdp"), whole.fsdp_state + whole.fsdp_window + whole.activations);
  // The activations are the model's own figure (Model::own_bytes, held to the model's allocations by
  // fsdp_memory's test) for the configured micro-batch.
  EXPECT_EQ(whole.activations, double(model::Model<float>::own_bytes(model, model::Recompute::None, 4, 128)));
  config.train.recompute = "blocks";
  const MemoryEstimate recomputed = estimate_memory(config, model, 2);
  EXPECT_EQ(recomputed.activations, double(model::Model<float>::own_bytes(model, model::Recompute::Blocks, 4, 128)));
  EXPECT_LT(recomputed.activations, whole.activations);
}

TEST(MemoryCheck, Bf16AddsTheHeadsTwoPackedCopiesToEveryStrategy) {
  Config config = preset("tiny.toml");
  config.train.recompute = "none";
  ModelConfig model;
  model.vocab_size = 1000;
  model.d_model = 64;
  const MemoryEstimate fp32 = estimate_memory(config, model, 4);
  config.train.precision = "bf16";
  const MemoryEstimate bf16 = estimate_memory(config, model, 4);
  const double copies = 2 * 2 * 1000 * 64;  // two transpositions, 2 bytes per weight
  EXPECT_EQ(fp32.head_copies, 0.0);
  EXPECT_EQ(bf16.head_copies, copies);
  for (const char* strategy : {"replicated", "fsdp", "hsdp"})
    EXPECT_EQ(bf16.total(strategy), fp32.total(strategy) + copies) << strategy;
}

TEST(MemoryCheck, AsynchronousCheckpointsAddTheirStagingShareToEveryStrategy) {
  Config config = preset("tiny.toml");
  ModelConfig model;
  model.vocab_size = 1000;
  model.d_model = 64;
  config.checkpoint.dir.clear();
  const MemoryEstimate none = estimate_memory(config, model, 4);
  config.checkpoint.dir = "ckpt";
  config.checkpoint.async = false;
  const MemoryEstimate sync = estimate_memory(config, model, 4);
  config.checkpoint.async = true;
  const MemoryEstimate async = estimate_memory(config, model, 4);
  const double staging = 3.0 * 4.0 * double(model.parameter_count()) / 4;  // weights and moments, a quarter each
  EXPECT_EQ(none.checkpoint_staging, 0.0);
  EXPECT_EQ(sync.checkpoint_staging, 0.0);
  EXPECT_EQ(async.checkpoint_staging, staging);
  for (const char* strategy : {"replicated", "fsdp", "hsdp"})
    EXPECT_EQ(async.total(strategy), sync.total(strategy) + staging) << strategy;
  EXPECT_NE(dry_run_report(config, model, 4).find("checkpoint staging "), std::string::npos);
}

// On a CUDA device: the host's state, window and activations; its workspaces instead of the host's buffers
// (the bf16 head copies, checkpoint staging and snapshot buffers stay in host memory).
TEST(MemoryCheck, TheDeviceEstimateCountsTheStateActivationsAndWorkspaces) {
  Config config = preset("tiny.toml");
  config.train.batch_size = 4;
  config.data.seq_len = 128;
  config.train.recompute = "none";
  config.checkpoint.dir = "ckpt";
  config.checkpoint.async = true;
  config.checkpoint.memory_every_steps = 10;
  const ModelConfig model = small_model();
  constexpr double kMiB = 1024.0 * 1024.0;
  for (const char* precision : {"fp32", "bf16"}) {
    config.train.precision = precision;
    const MemoryEstimate host = estimate_memory(config, model, 2);
    const MemoryEstimate device = estimate_memory(config, model, 2, dist::TensorPlace::device);
    EXPECT_EQ(device.place, dist::TensorPlace::device);
    EXPECT_EQ(device.state_replicated, host.state_replicated);
    EXPECT_EQ(device.fsdp_window, host.fsdp_window);
    EXPECT_EQ(device.activations, host.activations);
    EXPECT_EQ(device.head_copies + device.checkpoint_staging + device.memory_snapshot, 0.0);
    EXPECT_GT(host.checkpoint_staging, 0.0);
    EXPECT_EQ(host.device_workspaces, 0.0);
    // cuBLAS's pool; in bf16 also cuBLASLt's and the operands rounded to bf16: the largest weight (the head's
    // 1000 x 64) and the largest activation (4 x 128 tokens of the 2 x 128-wide gate and up outputs).
    const double workspaces = std::string(precision) == "fp32"
                                  ? 32 * kMiB
                                  : 64 * kMiB + 2.0 * (1000.0 * 64 + 4.0 * 128 * 2 * 128);
    EXPECT_EQ(device.device_workspaces, workspaces) << precision;
    for (const char* strategy : {"replicated", "fsdp"})
      EXPECT_EQ(device.total(strategy), host.total(strategy) - host.head_copies - host.checkpoint_staging -
                                            host.memory_snapshot + workspaces)
          << strategy << " " << precision;
  }
  const std::string report = device_memory_report(config, model, 2);
  EXPECT_EQ(report.rfind("device memory per rank at 2 ranks (on its CUDA device; estimate, float32 state; ", 0), 0u)
      << report;
  EXPECT_NE(report.find("workspaces " + format_bytes(64 * kMiB + 2.0 * (1000.0 * 64 + 4.0 * 128 * 2 * 128)) +
                        " (cuBLAS, cuBLASLt, bf16 operand copies)"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("fsdp: fully sharded over 2 ranks"), std::string::npos) << report;
}

// A run on devices compares the device estimate with the device's free memory, and says so.
TEST(MemoryCheck, ADeviceRunIsCheckedAgainstItsDevicesFreeMemory) {
  const Config config = small_config();
  const ModelConfig model = small_model();
  dist::DeviceQuery seen;
  seen.cuda_build = true;
  seen.device_count = 1;
  seen.device = 0;
  seen.name = "NVIDIA H100 80GB HBM3";
  seen.total_bytes = std::uint64_t(80) << 30;
  const double needed = estimate_memory(config, model, 1, dist::TensorPlace::device).total("replicated");
  seen.free_bytes = std::uint64_t(needed);
  AvailableMemory device = device_available_memory(seen, "n1");
  EXPECT_EQ(device.place, dist::TensorPlace::device);
  EXPECT_EQ(device.described(), cat(format_bytes(double(seen.free_bytes)), " free of 80.00 GiB on CUDA device 0 "
                                    "(NVIDIA H100 80GB HBM3) of host n1"));
  check_memory(config, model, 1, device);  // fits exactly
  seen.free_bytes = std::uint64_t(needed / 2);
  device = device_available_memory(seen, "n1");
  const std::string what = refusal(config, model, 1, device);
  EXPECT_EQ(what.rfind("not enough device memory: this run needs about " + format_bytes(needed) + " per rank", 0), 0u)
      << what;
  EXPECT_NE(what.find("on CUDA device 0 (NVIDIA H100 80GB HBM3) of host n1). To fit: "), std::string::npos) << what;
  EXPECT_EQ(what.find("shared by"), std::string::npos) << what;
  seen.device = -1;
  EXPECT_THROW(device_available_memory(seen, "n1"), Error);
}

}  // namespace
}  // namespace llmtrain::job
