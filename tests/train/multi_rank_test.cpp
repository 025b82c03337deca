// Data-parallel equivalence under mpirun: W ranks, each training on its own b rows per step, follow the
// same trajectory as one process training on all W*b rows (the gradient all-reduce computes the mean).
// Every rank also runs the single-process reference itself and compares losses and final parameters.
#include <gtest/gtest.h>

#include <cmath>

#include "llmtrain/core/stop_signal.hpp"
#include "llmtrain/dist/collectives.hpp"
#include "llmtrain/dist/runtime.hpp"
#include "llmtrain/train/trainer.hpp"
#include "test_sources.hpp"

extern llmtrain::dist::Runtime* g_runtime;

namespace llmtrain::train {
namespace {

TrainOptions options() {
  TrainOptions o;
  o.steps = 6;
  o.schedule.lr = 1e-2;
  o.schedule.warmup_steps = 2;
  o.peak_flops = 1e11;
  return o;
}

TEST(MultiRank, WRanksWithBatchBMatchOneRankWithBatchWb) {
  const int world = g_runtime->size(), rank = g_runtime->rank();
  const std::int64_t b = 2;
  auto comm = dist::make_collectives("mpi", *g_runtime);
  testing::TrainingRun distributed(testing::tiny_model(), options(), *comm);
  testing::RowSlice mine(world * b, rank * b, b);
  const auto history = distributed.trainer.run(mine);

  testing::SingleRankCollectives alone;
  testing::TrainingRun reference(testing::tiny_model(), options(), alone);
  testing::RowSlice everything(world * b, 0, world * b);
  const auto expected = reference.trainer.run(everything);

  ASSERT_EQ(history.size(), expected.size());
  for (std::size_t i = 0; i < history.size(); ++i) {
    EXPECT_NEAR(history[i].loss, expected[i].loss, 1e-5 * expected[i].loss) << "step " << i + 1;
    EXPECT_NEAR(history[i].grad_norm, expected[i].grad_norm, 1e-4 * expected[i].grad_norm) << "step " << i + 1;
    EXPECT_EQ(history[i].tokens, expected[i].tokens);
  }
  for (std::size_t u = 0; u < reference.store.param_shards().size(); ++u) {
    const auto& p = distributed.store.param_shards()[u].flat;
    const auto& q = reference.store.param_shards()[u].flat;
    double diff = 0, norm = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
      diff += (double(p(i)) - double(q(i))) * (double(p(i)) - double(q(i)));
      norm += double(q(i)) * double(q(i));
    }
    EXPECT_LE(std::sqrt(diff), 1e-5 * std::sqrt(norm)) << reference.store.param_shards()[u].layout.name;
  }
}

// A stop signal that reaches only rank 0, between two steps: every rank must take the same number of further
// steps and leave run() (a rank leaving alone would leave the others waiting in the next all-reduce).
TEST(MultiRank, AStopSignalOnOneRankStopsAllRanksAfterTheSameStep) {
  const int world = g_runtime->size(), rank = g_runtime->rank();
  auto comm = dist::make_collectives("mpi", *g_runtime);
  testing::TrainingRun run(testing::tiny_model(), options(), *comm);
  testing::RowSlice mine(world * 2, rank * 2, 2);
  run.trainer.train_step(mine);
  if (rank == 0) request_stop();
  const auto history = run.trainer.run(mine);
  const bool stopped = run.trainer.stopped_by_signal();
  clear_stop_request();
  EXPECT_EQ(history.size(), 1u);
  EXPECT_EQ(run.trainer.step(), 2);
  EXPECT_TRUE(stopped);
}

}  // namespace
}  // namespace llmtrain::train
