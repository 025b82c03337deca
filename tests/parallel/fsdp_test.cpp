// The sharded stores under mpirun (W = 1..4 ranks): FSDP and HSDP follow the trajectory of one process
// training on the whole global batch, and the window settings (K, reshard_after_forward) change nothing in
// the numbers, bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "llmtrain/core/error.hpp"
#include "llmtrain/dist/collectives.hpp"
#include "llmtrain/dist/runtime.hpp"
#include "llmtrain/parallel/fsdp_store.hpp"
#include "llmtrain/parallel/store_options.hpp"
#include "llmtrain/parallel/trace.hpp"
#include "../train/test_sources.hpp"

extern llmtrain::dist::Runtime* g_runtime;

namespace llmtrain::parallel {
namespace {

constexpr std::int64_t kRows = 2;  // rows per rank and micro-batch

train::TrainOptions options(std::int64_t steps, std::int64_t grad_accum = 1) {
  train::TrainOptions o;
  o.steps = steps;
  o.grad_accum = grad_accum;
  o.schedule.lr = 1e-2;
  o.schedule.warmup_steps = 2;
  return o;
}

ModelConfig untied() {
  ModelConfig c = testing::tiny_model();
  c.tie_embeddings = false;
  return c;
}

StoreOptions sharded(const std::string& strategy, int group = 0) {
  StoreOptions o;
  o.strategy = strategy;
  o.shard_group_size = group;
  return o;
}

// This rank's rows of each global batch, trained under `store`.
std::vector<train::StepMetrics> train_distributed(const ModelConfig& config, const train::TrainOptions& o,
                                                  const StoreOptions& store, dist::Collectives& comm,
                                                  std::vector<std::vector<float>>* params = nullptr) {
  const int world = comm.size(), rank = comm.rank();
  testing::TrainingRun run(config, o, comm, "none", {}, store);
  testing::RowSlice mine(world * kRows, rank * kRows, kRows);
  auto history = run.trainer.run(mine);
  if (params) {
    params->clear();
    for (auto& unit : run.store.param_shards()) {
      auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), unit.flat);
      params->emplace_back(host.data(), host.data() + host.size());
    }
  }
  return history;
}

// The same global batches in one process, replicated.
std::vector<train::StepMetrics> train_alone(const ModelConfig& config, const train::TrainOptions& o, int world) {
  testing::SingleRankCollectives alone;
  testing::TrainingRun run(config, o, alone);
  testing::RowSlice everything(world * kRows, 0, world * kRows);
  return run.trainer.run(everything);
}

void expect_same_trajectory(const std::vector<train::StepMetrics>& got, const std::vector<train::StepMetrics>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i].loss, want[i].loss, 1e-5 * want[i].loss) << "step " << i + 1;
    EXPECT_NEAR(got[i].grad_norm, want[i].grad_norm, 1e-4 * want[i].grad_norm) << "step " << i + 1;
    EXPECT_EQ(got[i].tokens, want[i].tokens) << "step " << i + 1;
  }
  // The model must have learned: a store that dropped gradients would keep the loss near ln(32).
  EXPECT_LT(got.back().loss, 0.8 * got.front().loss);
}

TEST(Fsdp, TrainsLikeOneProcessOnTheGlobalBatch) {
  auto comm = dist::make_collectives("mpi", *g_runtime);
  for (const ModelConfig& config : {testing::tiny_model(), untied()}) {
    SCOPED_TRACE(config.tie_embeddings ? "tied" : "untied");
    expect_same_trajectory(train_distributed(config, options(20), sharded("fsdp"), *comm),
                           train_alone(config, options(20), comm->size()));
  }
}

TEST(Fsdp, AccumulatesMicroBatchesLikeOneProcess) {
  auto comm = dist::make_collectives("mpi", *g_runtime);
  expect_same_trajectory(train_distributed(testing::tiny_model(), options(10, 3), sharded("fsdp"), *comm),
                         train_alone(testing::tiny_model(), options(10, 3), comm->size()));
}

TEST(Fsdp, ReplicatedOverlappedReductionTrainsLikeOneProcess) {
  auto comm = dist::make_collectives("mpi", *g_runtime);
  StoreOptions replicated;
  replicated.max_inflight_reductions = 1;
  expect_same_trajectory(train_distributed(testing::tiny_model(), options(10, 2), replicated, *comm),
                         train_alone(testing::tiny_model(), options(10, 2), comm->size()));
}

// HSDP with every shard group size that divides W: S = W is FSDP, S = 1 replicates through the sharded path.
TEST(Hsdp, TrainsLikeOneProcessOnTheGlobalBatch) {
  auto comm = dist::make_collectives("mpi", *g_runtime);
  const auto want = train_alone(untied(), options(20), comm->size());
  for (int group = 1; group <= comm->size(); ++group) {
    if (comm->size() % group != 0) continue;
    SCOPED_TRACE("shard group size " + std::to_string(group));
    expect_same_trajectory(train_distributed(untied(), options(20), sharded("hsdp", group), *comm), want);
  }
}

// With micro-batches, HSDP sums across its groups once per step (the last micro-batch folds in what the earlier
// ones reduced inside the group): still the one-process trajectory, for every S, in fp32. S = 1 replicates
// through the sharded path, so every micro-batch but the last reduces nothing at all.
TEST(Hsdp, AccumulatesMicroBatchesAndSumsAcrossGroupsOncePerStep) {
  auto comm = dist::make_collectives("mpi", *g_runtime);
  const auto want = train_alone(untied(), options(10, 3), comm->size());
  for (int group = 1; group <= comm->size(); ++group) {
    if (comm->size() % group != 0) continue;
    SCOPED_TRACE("shard group size " + std::to_string(group));
    expect_same_trajectory(train_distributed(untied(), options(10, 3), sharded("hsdp", group), *comm), want);
  }
}

// K and reshard_after_forward change when gathers happen, never what is computed.
TEST(Fsdp, WindowSettingsGiveBitwiseIdenticalParameters) {
  auto comm = dist::make_collectives("mpi", *g_runtime);
  for (const ModelConfig& config : {testing::tiny_model(), untied()}) {
    SCOPED_TRACE(config.tie_embeddings ? "tied" : "untied");
    std::vector<std::vector<float>> reference, params;
    train_distributed(config, options(10), sharded("fsdp"), *comm, &reference);
    for (const int k : {1, 2, 4})
      for (const bool reshard : {true, false}) {
        SCOPED_TRACE("K = " + std::to_string(k) + (reshard ? ", resharding" : ", not resharding"));
        StoreOptions o = sharded("fsdp");
        o.max_inflight_units = k;
        o.max_inflight_reductions = k;
        o.reshard_after_forward = reshard;
        train_distributed(config, options(10), o, *comm, &params);
        ASSERT_EQ(params.size(), reference.size());
        for (std::size_t u = 0; u < params.size(); ++u)
          EXPECT_EQ(0, std::memcmp(params[u].data(), reference[u].data(), params[u].size() * sizeof(float)))
              << "unit " << u;
      }
  }
}

// bf16 on the wire (parameters gathered as bf16 casts, gradients summed in bf16 hops) follows fp32 closely
// over 100 steps, but is not fp32: the final losses differ (at W = 1 only the gathered parameters are
// rounded; at W > 1 the gradients too). Every strategy, HSDP's all-reduce of chunks included.
TEST(Bf16Comm, TrainsWithinTwoPercentOfFp32After100Steps) {
  auto comm = dist::make_collectives("mpi", *g_runtime);
  std::vector<StoreOptions> strategies = {sharded("fsdp"), StoreOptions{}};
  if (comm->size() % 2 == 0) strategies.push_back(sharded("hsdp", comm->size() / 2));
  for (StoreOptions o : strategies) {
    SCOPED_TRACE(o.strategy);
    // A learning rate at which the loss is still well above zero after 100 steps (a relative tolerance
    // on a loss near zero would compare noise).
    train::TrainOptions slow = options(100);
    slow.schedule.lr = 2e-3;
    const double fp32 = train_distributed(testing::tiny_model(), slow, o, *comm).back().loss;
    o.comm_dtype = dist::DType::bf16;
    const double bf16 = train_distributed(testing::tiny_model(), slow, o, *comm).back().loss;
    if (comm->rank() == 0) std::printf("%s: fp32 %.6f, bf16 %.6f\n", o.strategy.c_str(), fp32, bf16);
    EXPECT_NEAR(bf16, fp32, 0.02 * fp32);
    if (o.strategy != "replicated" || comm->size() > 1) {
      EXPECT_NE(bf16, fp32) << "bf16 changed nothing: is it on the wire?";
    }
  }
}

// The trace: every unit's gathers on the communication track, its compute spans on the compute track, and
// each compute span begins after a gather of that unit ended (the store waited before handing it out).
TEST(FsdpTrace, RecordsGathersBeforeComputeOnTwoTracks) {
  auto comm = dist::make_collectives("mpi", *g_runtime);
  testing::TrainingRun run(untied(), options(2), *comm, "none", {}, sharded("fsdp"));
  Trace trace(comm->rank());
  run.store.set_trace(&trace);
  testing::RowSlice mine(comm->size() * kRows, comm->rank() * kRows, kRows);
  run.trainer.run(mine);
  run.store.set_trace(nullptr);
  const auto path = std::filesystem::temp_directory_path() / ("llmtrain_fsdp_trace." + std::to_string(comm->rank()) + ".json");
  trace.write(path.string());
  std::ifstream in(path);
  const auto json = nlohmann::json::parse(in);
  std::filesystem::remove(path);
  std::map<std::string, std::vector<std::pair<double, double>>> gathers, uses;
  int reductions = 0;
  for (const auto& e : json["traceEvents"]) {
    if (e["ph"] != "X") continue;
    EXPECT_EQ(e["pid"], comm->rank());
    const std::string name = e["name"];
    const double begin = e["ts"], end = begin + e["dur"].get<double>();
    EXPECT_LE(begin, end);
    if (name.rfind("all_gather ", 0) == 0) {
      EXPECT_EQ(e["tid"], Trace::communication);
      gathers[name.substr(11)].push_back({begin, end});
    } else if (name.rfind("reduce_scatter ", 0) == 0) {
      EXPECT_EQ(e["tid"], Trace::communication);
      ++reductions;
    } else if (name.rfind("wait: ", 0) != 0) {
      EXPECT_EQ(e["tid"], Trace::compute);
      uses[name].push_back({begin, end});
    }
  }
  const auto layouts = model::unit_layouts(untied());
  EXPECT_EQ(reductions, 2 * int(layouts.size()));
  for (const auto& layout : layouts) {
    const auto& g = gathers[layout.name];
    const auto& u = uses[layout.name];
    ASSERT_FALSE(u.empty()) << layout.name;
    for (const auto& use : u) {
      const bool after_a_gather =
          std::any_of(g.begin(), g.end(), [&](const auto& gather) { return gather.second <= use.first; });
      EXPECT_TRUE(after_a_gather) << layout.name << " used at " << use.first << " before any of its gathers ended";
    }
  }
}

// Ranges: each rank's shard is [begin, end) of the unpadded unit, the ranks' ranges tile it in rank order.
TEST(Fsdp, ShardRangesTileEveryUnitWithoutPadding) {
  auto comm = dist::make_collectives("mpi", *g_runtime);
  FsdpStore store(untied(), sharded("fsdp"), *comm);
  for (const auto& unit : store.param_shards()) {
    double range[2] = {double(unit.begin), double(unit.end())};
    std::vector<double> all(2 * std::size_t(comm->size()), 0.0);
    all[2 * std::size_t(comm->rank())] = range[0];
    all[2 * std::size_t(comm->rank()) + 1] = range[1];
    comm->agree_sum(all.data(), all.size());
    EXPECT_EQ(all.front(), 0.0);
    EXPECT_EQ(all.back(), double(unit.layout.size())) << unit.layout.name;
    for (int r = 1; r < comm->size(); ++r) EXPECT_EQ(all[2 * std::size_t(r)], all[2 * std::size_t(r) - 1]);
  }
}

TEST(Fsdp, RejectsBadOptionsNamingTheKey) {
  auto comm = dist::make_collectives("mpi", *g_runtime);
  const auto message = [&](const StoreOptions& o) {
    try {
      make_store(untied(), o, *comm);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(sharded("zero3")).find("parallel.strategy: \"zero3\""), std::string::npos);
  EXPECT_NE(message(sharded("hsdp", 0)).find("parallel.shard_group_size"), std::string::npos);
  if (comm->size() > 1) {
    EXPECT_NE(message(sharded("hsdp", comm->size() + 1)).find("parallel.shard_group_size"), std::string::npos);
  }
  StoreOptions k0 = sharded("fsdp");
  k0.max_inflight_units = 0;
  EXPECT_NE(message(k0).find("parallel.max_inflight_units"), std::string::npos);
  StoreOptions r0 = sharded("fsdp");
  r0.max_inflight_reductions = 0;
  EXPECT_NE(message(r0).find("parallel.max_inflight_reductions"), std::string::npos);
}

}  // namespace
}  // namespace llmtrain::parallel
