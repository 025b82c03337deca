// The training loop on one rank: it learns, it is bitwise deterministic, gradient accumulation matches a
// larger batch, metrics.jsonl has one complete line per step, and a stop request ends the run.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "llmtrain/core/error.hpp"
#include "llmtrain/core/stop_signal.hpp"
#include "llmtrain/train/trainer.hpp"
#include "test_sources.hpp"

namespace llmtrain::train {
namespace {

using llmtrain::testing::PatternSource;
using llmtrain::testing::SingleRankCollectives;
using llmtrain::testing::tiny_model;

TrainOptions options(std::int64_t steps) {
  TrainOptions o;
  o.steps = steps;
  o.schedule.lr = 1e-2;
  o.schedule.min_lr = 1e-3;
  o.schedule.warmup_steps = 5;
  o.progress_every = 0;
  o.peak_flops = 1e11;  // fixed: no sgemm probe in unit tests
  return o;
}

std::vector<double> losses(const std::vector<StepMetrics>& history) {
  std::vector<double> out;
  for (const auto& m : history) out.push_back(m.loss);
  return out;
}

TEST(Trainer, LearnsAPattern) {
  SingleRankCollectives comm;
  Trainer trainer(tiny_model(), options(60), comm);
  PatternSource source(4, 16, 32, 7);
  const auto history = trainer.run(source, nullptr);
  ASSERT_EQ(history.size(), 60u);
  EXPECT_NEAR(history.front().loss, std::log(32.0), 0.3);
  EXPECT_LT(history.back().loss, 0.5);  // ln(32) = 3.47; only the first token of a row is unpredictable
}

TEST(Trainer, TwoRunsGiveBitwiseIdenticalLosses) {
  SingleRankCollectives comm;
  std::vector<double> runs[2];
  for (auto& run : runs) {
    Trainer trainer(tiny_model(), options(8), comm);
    PatternSource source(2, 16, 32, 11);
    run = losses(trainer.run(source, nullptr));
  }
  EXPECT_EQ(runs[0], runs[1]);
}

TEST(Trainer, AccumulationMatchesLargerBatch) {
  SingleRankCollectives comm;
  auto accumulated = options(5);
  accumulated.grad_accum = 2;
  Trainer small_batches(tiny_model(), accumulated, comm);
  Trainer big_batch(tiny_model(), options(5), comm);
  PatternSource two_rows(2, 16, 32, 3), four_rows(4, 16, 32, 3);  // same rows, split in two micro-batches
  const auto a = losses(small_batches.run(two_rows, nullptr));
  const auto b = losses(big_batch.run(four_rows, nullptr));
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 2e-5 * b[i]) << "step " << i;
}

TEST(Trainer, WritesOneMetricsLinePerStepAndEvaluates) {
  const auto dir = std::filesystem::temp_directory_path() / "llmtrain_trainer_test";
  std::filesystem::remove_all(dir);
  SingleRankCollectives comm;
  auto o = options(4);
  o.run_dir = dir.string();
  o.eval_every = 2;
  o.eval_batches = 2;
  Trainer trainer(tiny_model(), o, comm);
  PatternSource train(2, 16, 32, 1), eval(2, 16, 32, 2);
  trainer.run(train, &eval);
  std::ifstream in(dir / "metrics.jsonl");
  std::string line;
  int train_lines = 0, eval_lines = 0;
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line);
    if (j["type"] == "train") {
      ++train_lines;
      EXPECT_EQ(j["step"], train_lines);
      for (const char* key : {"loss", "lr", "grad_norm", "tokens_per_s", "mfu"}) EXPECT_TRUE(j.contains(key)) << key;
      for (const char* key : {"data_wait", "forward", "backward", "optimizer"}) EXPECT_TRUE(j["time_s"].contains(key));
      EXPECT_EQ(j["tokens"], 32);
    } else {
      ++eval_lines;
      EXPECT_GT(j["eval_perplexity"].get<double>(), 1.0);
    }
  }
  EXPECT_EQ(train_lines, 4);
  EXPECT_EQ(eval_lines, 2);  // after step 2, and the final one
  std::filesystem::remove_all(dir);
}

// Counts the batches handed out.
class CountingSource : public BatchSource {
 public:
  Batch next() override {
    ++calls;
    return inner.next();
  }
  PatternSource inner{2, 16, 32, 8};
  int calls = 0;
};

TEST(Trainer, EvaluationsScoreTheSameBatches) {
  SingleRankCollectives comm;
  auto o = options(2);
  o.eval_batches = 3;
  Trainer trainer(tiny_model(), o, comm);
  CountingSource eval;
  const auto first = trainer.evaluate(eval);
  const auto again = trainer.evaluate(eval);
  EXPECT_EQ(first.loss, again.loss);
  EXPECT_EQ(first.tokens, 3 * 2 * 16);
  EXPECT_EQ(eval.calls, 3);
  PatternSource train(2, 16, 32, 1);
  trainer.train_step(train);
  EXPECT_NE(trainer.evaluate(eval).loss, first.loss);
  EXPECT_EQ(eval.calls, 3);
}

TEST(Trainer, StopRequestEndsTheRunBetweenSteps) {
  SingleRankCollectives comm;
  Trainer trainer(tiny_model(), options(10), comm);
  PatternSource source(2, 16, 32, 5);
  trainer.train_step(source);
  request_stop();  // arrives between two steps: agreed in the next step's all-reduce, which then ends the run
  const auto history = trainer.run(source, nullptr);
  clear_stop_request();
  EXPECT_EQ(history.size(), 1u);
  EXPECT_EQ(trainer.step(), 2);
  EXPECT_TRUE(trainer.stopped_by_signal());
}

TEST(Trainer, DivergenceStopsWithAnError) {
  SingleRankCollectives comm;
  Trainer trainer(tiny_model(), options(3), comm);
  trainer.model().params()[1].flat(5) = std::numeric_limits<float>::quiet_NaN();
  PatternSource source(2, 16, 32, 5);
  EXPECT_THROW(trainer.train_step(source), Error);
}

TEST(Trainer, RejectsBadOptions) {
  SingleRankCollectives comm;
  auto o = options(0);
  EXPECT_THROW(Trainer(tiny_model(), o, comm), Error);
  o = options(3);
  o.grad_accum = 0;
  EXPECT_THROW(Trainer(tiny_model(), o, comm), Error);
  o = options(3);
  o.recompute = "all";
  EXPECT_THROW(Trainer(tiny_model(), o, comm), Error);
}

}  // namespace
}  // namespace llmtrain::train
