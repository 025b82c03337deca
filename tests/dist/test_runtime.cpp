// Bootstrap and MPI collectives on several real ranks (run with -np 1, 2 and 3).
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "llmtrain/core/error.hpp"
#include "llmtrain/dist/collectives.hpp"
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

TEST(MpiCollectives, AllReduceGatherScatterBroadcast) {
  const auto& rt = *g_runtime;
  auto coll = llmtrain::dist::make_collectives("mpi", rt);
  ASSERT_EQ(coll->name(), "mpi");
  const int r = rt.rank(), w = rt.size();
  const float expected_rank_sum = static_cast<float>(w * (w - 1) / 2);

  std::vector<float> v = {static_cast<float>(r), 1.0f, static_cast<float>(2 * r)};
  coll->all_reduce_sum(v.data(), v.size());
  EXPECT_EQ(v[0], expected_rank_sum);
  EXPECT_EQ(v[1], static_cast<float>(w));
  EXPECT_EQ(v[2], 2 * expected_rank_sum);

  std::vector<float> m = {static_cast<float>(r)};
  coll->all_reduce_mean(m.data(), 1);
  EXPECT_FLOAT_EQ(m[0], expected_rank_sum / w);

  std::vector<float> mine = {static_cast<float>(r), static_cast<float>(10 * r)};
  std::vector<float> gathered(2 * w, -1.0f);
  coll->all_gather(mine.data(), gathered.data(), 2);
  for (int k = 0; k < w; ++k) {
    EXPECT_EQ(gathered[2 * k], static_cast<float>(k));
    EXPECT_EQ(gathered[2 * k + 1], static_cast<float>(10 * k));
  }

  std::vector<float> blocks(w);
  for (int k = 0; k < w; ++k) blocks[k] = static_cast<float>(k + r);  // block k from rank r
  float reduced = -1.0f;
  coll->reduce_scatter_sum(blocks.data(), &reduced, 1);
  EXPECT_EQ(reduced, static_cast<float>(w * r) + expected_rank_sum);  // sum over ranks of (r_me + rank)

  std::vector<float> b = {r == w - 1 ? 42.0f : 0.0f};
  coll->broadcast(b.data(), 1, w - 1);
  EXPECT_EQ(b[0], 42.0f);
  coll->synchronize();
}

TEST(MpiCollectives, UnknownBackendIsAnError) {
  EXPECT_THROW(llmtrain::dist::make_collectives("gloo", *g_runtime), llmtrain::Error);
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
