// LLMTRAIN_RECOVERY, the job scripts' note to a relaunched run: what parses and what is refused.
#include <gtest/gtest.h>

#include "llmtrain/core/error.hpp"
#include "relaunch.hpp"

namespace {

using llmtrain::job::parse_relaunch;

TEST(Relaunch, UnsetOrEmptyIsAFirstLaunch) {
  EXPECT_FALSE(parse_relaunch(nullptr));
  EXPECT_FALSE(parse_relaunch(""));
}

TEST(Relaunch, ReadsTheFailureTimeAndTheLastStepInEitherOrder) {
  const auto a = parse_relaunch("failed_at=1795000000.25,last_step=17");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->failed_at_unix_s, 1795000000.25);
  EXPECT_EQ(a->last_step, 17);
  const auto b = parse_relaunch("last_step=0,failed_at=12");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->last_step, 0);
  EXPECT_EQ(b->failed_at_unix_s, 12.0);
}

TEST(Relaunch, MalformedValuesNameTheVariable) {
  for (const char* bad : {"failed_at=12", "last_step=3", "failed_at=x,last_step=3", "failed_at=12,last_step=-1",
                          "failed_at=12,last_step=3,extra=1", "failed_at=12;last_step=3", "failed_at=12,last_step=3x"}) {
    try {
      parse_relaunch(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const llmtrain::Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("LLMTRAIN_RECOVERY=") + bad), std::string::npos) << e.what();
    }
  }
}

}  // namespace
