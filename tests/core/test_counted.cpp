// counted(): one noun, one count, the plural only where it is not 1.
#include <gtest/gtest.h>

#include <cstdint>

#include "llmtrain/core/counted.hpp"

namespace llmtrain {
namespace {

TEST(Counted, SingularForOnePluralOtherwise) {
  EXPECT_EQ(counted(1, "rank"), "1 rank");
  EXPECT_EQ(counted(0, "rank"), "0 ranks");
  EXPECT_EQ(counted(8, "rank"), "8 ranks");
  EXPECT_EQ(counted(std::uint64_t(1), "problem"), "1 problem");
  EXPECT_EQ(counted(std::size_t(2), "problem"), "2 problems");
  EXPECT_EQ(counted(1, "micro-batch", "micro-batches"), "1 micro-batch");
  EXPECT_EQ(counted(16, "micro-batch", "micro-batches"), "16 micro-batches");
}

}  // namespace
}  // namespace llmtrain
