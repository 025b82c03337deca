// Memory of the sharded store under mpirun, counted by the tracking allocator (every Kokkos allocation):
// the state a rank keeps is 1/W of the replicated state (plus padding), and the peak of a training step
// stays under the analytic bound
//   shard state + K x largest unit (gathered) + (R + 1) x largest unit (gradients being reduced and the one
//   being computed) + R x chunk (reduce-scatter outputs) + what the model itself allocates,
// for K = 1, 2, 4, while a wider window does cost memory. An untied, small-vocabulary model, so that the
// blocks, not the embedding, dominate. And what the model allocates itself is Model::own_bytes, the figure
// the dry run's estimate counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "llmtrain/dist/collectives.hpp"
#include "llmtrain/dist/runtime.hpp"
#include "llmtrain/parallel/memory_tracker.hpp"
#include "llmtrain/parallel/replicated_store.hpp"
#include "../train/test_sources.hpp"

extern llmtrain::dist::Runtime* g_runtime;

namespace llmtrain::parallel {
namespace {

constexpr std::int64_t kRows = 2, kSeqLen = 16;  // RowSlice's rows are 16 tokens long

ModelConfig blocks_dominate() {
  ModelConfig c = testing::tiny_model();
  c.n_layers = 6;
  c.d_model = 64;
  c.d_ff = 192;
  c.tie_embeddings = false;
  return c;
}

// What the model allocates besides its units, measured: fixed tables and, during a pass, activations and
// scratch.
std::int64_t model_own_bytes(const ModelConfig& config, model::Recompute recompute = model::Recompute::None) {
  model::LocalUnits<float> units(config);
  const std::int64_t before = live_bytes();
  model::Model<float> m(config, recompute, units);
  testing::RowSlice rows(kRows, 0, kRows);
  take_peak_bytes();
  m.forward_backward(rows.next(), 1.0);
  return take_peak_bytes() - before;
}

// Model::own_bytes, which the dry run's memory estimate counts, is exactly what a model allocates: tied and
// untied, with and without recomputation, grouped-query attention (tiny_model) or not.
TEST(ModelMemory, OwnBytesIsWhatTheModelAllocates) {
  track_memory();
  // A process's first pass also makes Kokkos' own scratch (about 11 KB here), which later passes reuse.
  model_own_bytes(testing::tiny_model());
  ModelConfig grouped = testing::tiny_model(), plain = blocks_dominate();
  for (const ModelConfig& base : {grouped, plain})
    for (const bool tied : {false, true})
      for (const auto recompute : {model::Recompute::None, model::Recompute::Blocks}) {
        ModelConfig config = base;
        config.tie_embeddings = tied;
        SCOPED_TRACE(::testing::Message() << "n_kv_heads " << config.n_kv_heads << ", tied " << tied << ", recompute "
                                        << (recompute == model::Recompute::Blocks ? "blocks" : "none"));
        EXPECT_EQ(model_own_bytes(config, recompute),
                  model::Model<float>::own_bytes(config, recompute, kRows, kSeqLen));
      }
}

TEST(FsdpMemory, ShardedStateIsOneWthAndPeakStaysUnderTheBound) {
  track_memory();
  auto comm = dist::make_collectives("mpi", *g_runtime);
  const int world = comm->size();
  const ModelConfig config = blocks_dominate();
  const std::int64_t model_bytes = model_own_bytes(config);
  const std::int64_t replicated = ReplicatedStore(config, *comm).shard_bytes();
  std::int64_t largest = 0;
  for (const auto& layout : model::unit_layouts(config)) largest = std::max(largest, layout.size());
  const std::int64_t unit_bytes = 4 * ((largest + world - 1) / world) * world, chunk_bytes = unit_bytes / world;

  std::vector<std::int64_t> peaks;
  for (const int k : {1, 2, 4}) {
    SCOPED_TRACE("K = " + std::to_string(k));
    StoreOptions o;
    o.strategy = "fsdp";
    o.max_inflight_units = k;
    const int r = o.max_inflight_reductions;
    train::TrainOptions t;
    t.steps = 3;
    const std::int64_t before = live_bytes();
    {
      testing::TrainingRun run(config, t, *comm, "none", {}, o);
      const std::int64_t state = run.store.shard_bytes();
      EXPECT_LE(double(state), (world == 4 ? 0.26 : 1.0 / world + 0.01) * double(replicated));
      EXPECT_GE(double(state), double(replicated) / world);
      testing::RowSlice mine(world * kRows, comm->rank() * kRows, kRows);
      // Each step's metrics carry its peak (the trainer takes the tracker's peak per step).
      std::int64_t step_peak = 0;
      for (const auto& m : run.trainer.run(mine)) step_peak = std::max(step_peak, m.peak_bytes);
      const std::int64_t peak = step_peak - before;
      const std::int64_t bound = state + k * unit_bytes + (r + 1) * unit_bytes + r * chunk_bytes + model_bytes;
      EXPECT_LE(peak, bound) << "state " << state << ", unit " << unit_bytes << ", model " << model_bytes;
      peaks.push_back(peak);
      if (comm->rank() == 0)
        std::printf("W = %d, K = %d: state %lld B (replicated %lld B), peak %lld B, bound %lld B\n", world, k,
                    (long long)state, (long long)replicated, (long long)peak, (long long)bound);
    }
    EXPECT_EQ(live_bytes(), before) << "the store left allocations behind";
  }
  // The window is what a wider K costs: K = 4 holds more gathered units than K = 1.
  if (world > 1) {
    EXPECT_GT(peaks[2], peaks[0]);
  }
}

}  // namespace
}  // namespace llmtrain::parallel
