// Bootstrap and the SPMD error path on several real ranks (run with -np 1, 2 and 3).
#include <gtest/gtest.h>

#include <vector>

#include "llmtrain/core/error.hpp"
#include "llmtrain/dist/runtime.hpp"
#include "llmtrain/dist/spmd_main.hpp"

extern llmtrain::dist::Runtime* g_runtime;

TEST(Runtime, RanksAreConsistentAcrossTheJob) {
  const auto& rt = *g_runtime;
  int world = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  EXPECT_EQ(rt.size(), world);
  ASSERT_GE(rt.rank(), 0);
  ASSERT_LT(rt.rank(), rt.size());
  EXPECT_LT(rt.local_rank(), rt.local_size());
  // Every rank appears once; local ranks summed over nodes give the world size.
  std::vector<int> ranks(rt.size());
  const int me = rt.rank();
  MPI_Allgather(&me, 1, MPI_INT, ranks.data(), 1, MPI_INT, rt.comm());
  for (int r = 0; r < rt.size(); ++r) EXPECT_EQ(ranks[r], r);
  const int leader_sizes = rt.local_rank() == 0 ? rt.local_size() : 0;
  int total = 0;
  MPI_Allreduce(&leader_sizes, &total, 1, MPI_INT, MPI_SUM, rt.comm());
  EXPECT_EQ(total, rt.size());
  EXPECT_GE(rt.node_count(), 1);
  EXPECT_LE(rt.node_count(), rt.size());
}

TEST(Agree, EveryRankSeesTheMessageOfTheLowestFailingRank) {
  const auto& rt = *g_runtime;
  EXPECT_NO_THROW(llmtrain::dist::agree(rt, [] {}));
  const int failing = rt.size() - 1;  // the last rank fails alone
  try {
    llmtrain::dist::agree(rt, [&] {
      if (rt.rank() == failing) LLMTRAIN_FAIL("bad value on rank ", rt.rank());
    });
    FAIL() << "agree() did not throw on rank " << rt.rank();
  } catch (const llmtrain::Error& e) {
    EXPECT_EQ(std::string(e.what()), "bad value on rank " + std::to_string(failing));
  }
}
