// MFU is never above 100 %: the sgemm peak is a high percentile of many timed calls (not one noisy call),
// and a step that runs faster than the peak raises it.
#include <gtest/gtest.h>

#include <cmath>

#include "llmtrain/core/error.hpp"
#include "llmtrain/model/gemm.hpp"
#include "llmtrain/train/trainer.hpp"
#include "test_sources.hpp"

namespace llmtrain::train {
namespace {

using llmtrain::testing::PatternSource;
using llmtrain::testing::SingleRankCollectives;
using llmtrain::testing::tiny_model;
using llmtrain::testing::TrainingRun;

TEST(SgemmPeak, AHighPercentileIgnoresSlowCallsAndOneOutlier) {
  // Ten calls: most near 100, two slowed by another process, one timer glitch far above the rest.
  const std::vector<double> rates = {98, 40, 101, 99, 100, 35, 102, 97, 5000, 100};
  EXPECT_EQ(model::peak_from_rates(rates, 90), 102);
  EXPECT_EQ(model::peak_from_rates(rates, 100), 5000);
  EXPECT_EQ(model::peak_from_rates({7}, 90), 7);
  EXPECT_THROW(model::peak_from_rates({}, 90), Error);
  EXPECT_THROW(model::peak_from_rates(rates, 0), Error);
}

TEST(SgemmPeak, MeasuresAPositiveRateAndLeavesTheGemmCountersAlone) {
  model::reset_gemm_stats();
  const double peak = model::measure_gemm_peak(model::Precision::Fp32, 64, 0.0);
  EXPECT_TRUE(std::isfinite(peak));
  EXPECT_GT(peak, 0);
  EXPECT_EQ(model::gemm_stats().calls, 0);
}

TrainOptions with_peak(double peak_flops) {
  TrainOptions o;
  o.steps = 3;
  o.schedule.lr = 1e-2;
  o.schedule.min_lr = 1e-3;
  o.schedule.warmup_steps = 1;
  o.peak_flops = peak_flops;
  return o;
}

TEST(Mfu, APeakMeasuredTooLowIsRaisedToWhatTheStepAchieved) {
  SingleRankCollectives comm;
  TrainingRun run(tiny_model(), with_peak(1e3), comm);  // 1 kFLOP/s: far below any real step
  PatternSource source(2, 16, 32, 4);
  const auto history = run.trainer.run(source);
  ASSERT_EQ(history.size(), 3u);
  for (const auto& m : history) {
    EXPECT_GT(m.mfu, 0) << "step " << m.step;
    EXPECT_LE(m.mfu, 1.0) << "step " << m.step;
  }
  EXPECT_GT(run.trainer.options().peak_flops, 1e3);
}

TEST(Mfu, APlausiblePeakIsKept) {
  SingleRankCollectives comm;
  TrainingRun run(tiny_model(), with_peak(1e15), comm);
  PatternSource source(2, 16, 32, 4);
  const auto history = run.trainer.run(source);
  EXPECT_EQ(run.trainer.options().peak_flops, 1e15);
  for (const auto& m : history) EXPECT_LT(m.mfu, 1.0);
}

}  // namespace
}  // namespace llmtrain::train
