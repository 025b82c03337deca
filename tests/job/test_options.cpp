// Configuration -> area options: the warning of a run shorter than its warm-up (logged once), and hsdp's
// shard groups checked against the rank count.
#include <gtest/gtest.h>

#include <string>

#include "llmtrain/core/error.hpp"
#include "llmtrain/core/log.hpp"
#include "llmtrain/job/options.hpp"

namespace {

llmtrain::Config short_trial() {
  llmtrain::Config config = llmtrain::default_config();
  config.train.steps = 7;
  config.train.warmup_steps = 30;
  config.train.lr = 0.003;
  return config;
}

TEST(WarmupWarning, SaysWhatTheLearningRateDoes) {
  EXPECT_EQ(llmtrain::job::warmup_warning(short_trial().train),
            "train.warmup_steps = 30 is larger than train.steps = 7: the learning rate rises for the whole run and "
            "ends at 0.0007 (7/30 of train.lr = 0.003), never reaching train.lr nor decaying; set "
            "train.warmup_steps to at most 7 for a warm-up that completes");
  llmtrain::Config config = short_trial();
  config.train.warmup_steps = 7;  // a warm-up that ends on the last step is complete
  EXPECT_EQ(llmtrain::job::warmup_warning(config.train), "");
}

TEST(WarmupWarning, LoggedByRankZeroOnly) {
  for (const int rank : {0, 1}) {
    llmtrain::configure_logging(rank, llmtrain::LogLevel::Info, "");
    testing::internal::CaptureStderr();
    const llmtrain::train::TrainOptions options = llmtrain::job::train_options(short_trial(), 0);
    const std::string logged = testing::internal::GetCapturedStderr();
    EXPECT_EQ(options.schedule.warmup_steps, 30);  // the warm-up is kept: the trial is the longer run's start
    if (rank == 0)
      EXPECT_NE(logged.find("warning: train.warmup_steps = 30 is larger than train.steps = 7"), std::string::npos) << logged;
    else
      EXPECT_EQ(logged, "");
  }
}

TEST(StoreOptions, HsdpShardGroupSizeMustDivideTheRanks) {
  llmtrain::Config config = llmtrain::default_config();
  config.source_file = "run.toml";
  config.parallel.strategy = "hsdp";
  const auto error = [&](int world_size) {
    try {
      llmtrain::job::store_options(config, world_size);
    } catch (const llmtrain::Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error(4), "run.toml: parallel.shard_group_size: strategy hsdp needs the ranks per shard group (0 is the default)");
  config.parallel.shard_group_size = 2;
  EXPECT_EQ(error(1), "run.toml: parallel.shard_group_size: 2 must divide the number of ranks (1) into shard groups "
                      "(strategy hsdp)");
  EXPECT_EQ(error(4), "");
  EXPECT_EQ(llmtrain::job::store_options(config, 4).shard_group_size, 2);
}

}  // namespace
