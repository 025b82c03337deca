// The per-step communication bytes (StepMetrics::gather_bytes / reduce_bytes, metrics.jsonl's comm.*) under
// mpirun at W = 1, 2, 4 against their analytic values for a small untied model, counted here from the unit
// sizes alone (docs/parallel.md, "Bytes per step"):
//   replicated: no gathers; one all-reduce of every unit per step (the last micro-batch only), 4 (W-1)/W of
//               its bytes;
//   fsdp:       per micro-batch, every unit gathered in forward and every block again in backward
//               (resharded after forward, K = 1: a wider window may keep the last forward blocks gathered
//               into backward), and every unit reduce-scattered, 2 (W-1)/W of its padded bytes;
//   hsdp:       fsdp's per micro-batch inside shard groups of S = 2 (W > 1), plus one all-reduce of each
//               unit's chunk across the W / S groups per step (the last micro-batch only), 4 (R-1)/R of
//               the chunk's bytes;
// in fp32 and in bf16 (half). Two micro-batches per step tell the two strategies' reduction rules apart, and
// three steps show the counts are per step, not cumulative.
#include <gtest/gtest.h>

#include <string>

#include "llmtrain/dist/collectives.hpp"
#include "llmtrain/dist/runtime.hpp"
#include "llmtrain/parallel/store_options.hpp"
#include "../train/test_sources.hpp"

extern llmtrain::dist::Runtime* g_runtime;

namespace llmtrain::parallel {
namespace {

constexpr std::int64_t kRows = 2, kAccum = 2, kSteps = 3;

ModelConfig untied() {
  ModelConfig c = testing::tiny_model();
  c.tie_embeddings = false;
  c.n_layers = 3;
  return c;
}

struct Bytes {
  std::int64_t gather = 0, reduce = 0;
};

int shard_group(const std::string& strategy, int world) { return strategy == "hsdp" ? std::min(world, 2) : world; }

Bytes expected(const ModelConfig& config, const std::string& strategy, int world, std::int64_t element) {
  Bytes b;
  const auto layouts = model::unit_layouts(config);
  const int group = shard_group(strategy, world), replicas = world / group;
  for (std::size_t u = 0; u < layouts.size(); ++u) {
    const std::int64_t size = layouts[u].size();
    if (strategy == "replicated") {
      b.reduce += 4 * (world - 1) * size * element / world;
    } else {
      const std::int64_t chunk = (size + group - 1) / group;  // padded size / S
      const bool block = u > 0 && u + 1 < layouts.size();
      b.gather += kAccum * (block ? 2 : 1) * 2 * (group - 1) * chunk * element;
      b.reduce += kAccum * 2 * (group - 1) * chunk * element;
      b.reduce += 4 * (replicas - 1) * chunk * element / replicas;  // hsdp: once per step
    }
  }
  return b;
}

void check(const std::string& strategy, dist::DType wire) {
  auto comm = dist::make_collectives("mpi", *g_runtime);
  const int world = comm->size();
  const ModelConfig config = untied();
  StoreOptions store;
  store.strategy = strategy;
  store.comm_dtype = wire;
  store.max_inflight_units = 1;
  store.shard_group_size = shard_group(strategy, world);
  train::TrainOptions o;
  o.steps = kSteps;
  o.grad_accum = kAccum;
  testing::TrainingRun run(config, o, *comm, "none", {}, store);
  testing::RowSlice mine(world * kRows, comm->rank() * kRows, kRows);
  const Bytes want = expected(config, strategy, world, std::int64_t(dist::dtype_size(wire)));
  const auto history = run.trainer.run(mine);
  ASSERT_EQ(history.size(), std::size_t(kSteps));
  for (const auto& m : history) {
    SCOPED_TRACE("step " + std::to_string(m.step));
    EXPECT_EQ(m.gather_bytes, want.gather);
    EXPECT_EQ(m.reduce_bytes, want.reduce);
  }
  if (world > 1 && strategy != "replicated") {
    EXPECT_GT(want.gather, 0);
  }
  if (world > 1) {
    EXPECT_GT(want.reduce, 0);
  }
}

TEST(CommBytes, ReplicatedFp32) { check("replicated", dist::DType::f32); }
TEST(CommBytes, ReplicatedBf16) { check("replicated", dist::DType::bf16); }
TEST(CommBytes, FsdpFp32) { check("fsdp", dist::DType::f32); }
TEST(CommBytes, FsdpBf16) { check("fsdp", dist::DType::bf16); }
TEST(CommBytes, HsdpFp32) { check("hsdp", dist::DType::f32); }
TEST(CommBytes, HsdpBf16) { check("hsdp", dist::DType::bf16); }

}  // namespace
}  // namespace llmtrain::parallel
