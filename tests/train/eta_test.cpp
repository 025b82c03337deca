// The progress line's time left: at the pace of the steps this process took, also after a resume (a run
// resumed at step 80 of 100 that took 10 steps in 50 s has 50 s left at step 90, not 0).
#include <gtest/gtest.h>

#include "llmtrain/train/metrics.hpp"

namespace llmtrain::train {
namespace {

TEST(Eta, FollowsThePaceOfThisProcessNotTheAbsoluteStep) {
  EXPECT_DOUBLE_EQ(eta_seconds(50.0, 10, 10), 50.0);  // resumed at 80, now at step 90 of 100
  EXPECT_DOUBLE_EQ(eta_seconds(90.0, 90, 10), 10.0);  // a fresh run at step 90 of 100
  EXPECT_DOUBLE_EQ(eta_seconds(3.0, 1, 0), 0.0);      // the last step
  EXPECT_DOUBLE_EQ(eta_seconds(3.0, 0, 5), 0.0);      // no step taken yet: nothing to extrapolate
}

}  // namespace
}  // namespace llmtrain::train
