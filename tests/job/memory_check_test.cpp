// The memory check before allocation: MemAvailable is parsed (and malformed /proc/meminfo is an error); a
// run whose estimate exceeds what a rank may use is refused with the estimate, the available memory, where
// that figure came from and the settings to change; train.check_memory = false makes it a warning.
#include <gtest/gtest.h>

#include "llmtrain/core/config.hpp"
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
  EXPECT_NE(one.source.find("on host here, shared by its 1 rank"), std::string::npos) << one.source;
  EXPECT_NE(four.source.find("shared by its 4 ranks"), std::string::npos) << four.source;
}

TEST(MemoryCheck, ARunThatFitsPasses) {
  MemoryEstimate estimate;
  estimate.state_replicated = 1 * kGiB;
  estimate.activations = 0.5 * kGiB;
  check_memory(estimate.data_parallel(), estimate, {2 * kGiB, "test"}, true);
}

TEST(MemoryCheck, ARunThatDoesNotFitIsRefusedWithTheNumbersAndTheSettings) {
  MemoryEstimate estimate;
  estimate.state_replicated = 3 * kGiB;
  estimate.activations = 1 * kGiB;
  const AvailableMemory available{2 * kGiB, "4.00 GiB available (MemAvailable) on host n1, shared by its 2 ranks"};
  try {
    check_memory(estimate.data_parallel(), estimate, available, true);
    FAIL() << "a run needing 4 GiB per rank was allowed with 2 GiB";
  } catch (const Error& e) {
    const std::string what = e.what();
    for (const char* part : {"not enough memory: this run needs about 4.00 GiB per rank",
                             "AdamW moments 3.00 GiB + activations 1.00 GiB", "but 2.00 GiB is available per rank",
                             "on host n1, shared by its 2 ranks", "train.batch_size", "train.recompute",
                             "train.check_memory = false"})
      EXPECT_NE(what.find(part), std::string::npos) << part << "\n" << what;
  }
  // The override starts anyway (the warning is logged).
  check_memory(estimate.data_parallel(), estimate, available, false);
}

TEST(MemoryCheck, TheEstimateIsTheDryRunsAndShrinksWithRecomputeAndSharding) {
  Config config{};  // zero, not indeterminate: only the fields set below matter
  config.train.batch_size = 4;
  config.data.seq_len = 128;
  config.train.recompute = "none";
  ModelConfig model;
  model.vocab_size = 1000;
  model.d_model = 64;
  model.n_layers = 4;
  model.n_heads = 4;
  model.n_kv_heads = 4;
  model.d_ff = 128;
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
  Config config{};  // zero, not indeterminate: only the fields set below matter
  config.train.batch_size = 4;
  config.data.seq_len = 128;
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

}  // namespace
}  // namespace llmtrain::job
