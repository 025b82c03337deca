// Request on its own, with a scripted Pending: what completes it, what waits, and what a move leaves behind.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>

#include "llmtrain/dist/request.hpp"

namespace llmtrain::dist {
namespace {

// Completes on the test() call numbered `complete_after`, or on wait(); counts both into a shared log.
struct Log {
  int tests = 0, waits = 0, destroyed = 0;
};
class ScriptedPending final : public Request::Pending {
 public:
  ScriptedPending(Log& log, int complete_after) : log_(log), complete_after_(complete_after) {}
  ~ScriptedPending() override { ++log_.destroyed; }
  bool test() override { return ++log_.tests >= complete_after_; }
  void wait() override { ++log_.waits; }

 private:
  Log& log_;
  int complete_after_;
};

Request scripted(Log& log, int complete_after) { return Request(std::make_unique<ScriptedPending>(log, complete_after)); }

TEST(Request, DefaultConstructedIsComplete) {
  Request r;
  EXPECT_TRUE(r.test());
  r.wait();
}

TEST(Request, TestIsTrueOnceTheOperationCompletesAndStaysTrue) {
  Log log;
  Request r = scripted(log, 3);
  EXPECT_FALSE(r.test());
  EXPECT_FALSE(r.test());
  EXPECT_TRUE(r.test());
  EXPECT_EQ(log.destroyed, 1);  // released once complete
  EXPECT_TRUE(r.test());
  r.wait();
  EXPECT_EQ(log.tests, 3);
  EXPECT_EQ(log.waits, 0);
}

TEST(Request, DestroyingOrOverwritingAnIncompleteRequestWaits) {
  Log log;
  { Request r = scripted(log, 100); }
  EXPECT_EQ(log.waits, 1);
  Request r = scripted(log, 100);
  r = scripted(log, 100);  // the first one is waited for before it is replaced
  EXPECT_EQ(log.waits, 2);
  r.wait();
  EXPECT_EQ(log.waits, 3);
  EXPECT_EQ(log.destroyed, 3);
}

TEST(Request, MovingTransfersTheOperation) {
  Log log;
  Request a = scripted(log, 100);
  Request b = std::move(a);
  EXPECT_TRUE(a.test());  // NOLINT(bugprone-use-after-move): moved-from is defined as complete
  EXPECT_EQ(log.tests, 0);
  EXPECT_FALSE(b.test());
  b.wait();
  EXPECT_EQ(log.waits, 1);
}

// While an exception unwinds (a rank failing alone), waiting could hang on peers that never join.
TEST(Request, AnExceptionUnwindingPastAnIncompleteRequestDoesNotWait) {
  Log log;
  EXPECT_THROW(
      {
        Request r = scripted(log, 100);
        throw std::runtime_error("compute failed");
      },
      std::runtime_error);
  EXPECT_EQ(log.waits, 0);
  EXPECT_EQ(log.destroyed, 1);
}

}  // namespace
}  // namespace llmtrain::dist
