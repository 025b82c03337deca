// Configuration -> area options: the warning of a run shorter than its warm-up, and that it is logged once.
#include <gtest/gtest.h>

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

}  // namespace
