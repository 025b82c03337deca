// The gather window seen from the transport: a recording, deliberately slow wrapper of the collectives
// proves that no more than K units are gathered or in flight, that gathers are issued in pass order
// (forward, then the blocks in reverse) and go on the wire one at a time ahead of the reductions, that
// reductions stay within R, and that every gather is complete
// before the model reads the unit (its output is poisoned with NaN until the request completes, and
// acquire() must hand out only completed buffers). Runs under mpirun at 1, 2 and 4 ranks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <vector>

#include "llmtrain/dist/collectives.hpp"
#include "llmtrain/dist/runtime.hpp"
#include "llmtrain/parallel/fsdp_store.hpp"
#include "../train/test_sources.hpp"

extern llmtrain::dist::Runtime* g_runtime;

namespace llmtrain::parallel {
namespace {

// What the slow transport saw.
struct Recording {
  int tests_to_complete = 20;  // test() calls a request needs before it completes
  std::vector<const void*> gather_inputs;  // in issue order
  std::vector<std::vector<char>> gather_sent;  // what each gather's input held when it was issued
  std::map<const void*, bool> gather_done;  // by output buffer
  int gathers_in_flight = 0, max_gathers_in_flight = 0;
  int reductions_in_flight = 0, max_reductions_in_flight = 0;
  int reductions = 0, reductions_beside_gathers = 0;  // started; started while a gather was on the wire
};

// A request that completes only after `tests` calls of test() (or a wait), and only then copies the
// result into place.
class SlowPending : public dist::Request::Pending {
 public:
  SlowPending(dist::Request inner, std::vector<char> scratch, void* out, int tests, std::function<void()> on_done)
      : inner_(std::move(inner)), scratch_(std::move(scratch)), out_(out), tests_(tests), on_done_(std::move(on_done)) {}
  bool test() override {
    if (--tests_ > 0) return false;
    wait();
    return true;
  }
  void wait() override {
    inner_.wait();
    std::memcpy(out_, scratch_.data(), scratch_.size());
    on_done_();
  }

 private:
  dist::Request inner_;
  std::vector<char> scratch_;
  void* out_;
  int tests_;
  std::function<void()> on_done_;
};

class SlowCollectives : public dist::Collectives {
 public:
  SlowCollectives(std::unique_ptr<dist::Collectives> inner, Recording& log) : inner_(std::move(inner)), log_(log) {}
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  std::string name() const override { return "slow " + inner_->name(); }

  dist::Request all_gather(const void* in, void* out, std::size_t count, dist::DType type) override {
    const std::size_t bytes = count * dist::dtype_size(type) * std::size_t(size());
    std::vector<char> scratch(bytes);
    poison(out, bytes);
    dist::Request inner = inner_->all_gather(in, scratch.data(), count, type);
    log_.gather_inputs.push_back(in);
    log_.gather_sent.emplace_back(static_cast<const char*>(in), static_cast<const char*>(in) + count * dist::dtype_size(type));
    log_.gather_done[out] = false;
    log_.max_gathers_in_flight = std::max(log_.max_gathers_in_flight, ++log_.gathers_in_flight);
    return slow(std::move(inner), std::move(scratch), out, [this, out] {
      log_.gather_done[out] = true;
      --log_.gathers_in_flight;
    });
  }
  dist::Request reduce_scatter_sum(const void* in, void* out, std::size_t count, dist::DType type) override {
    std::vector<char> scratch(count * dist::dtype_size(type));
    poison(out, scratch.size());
    dist::Request inner = inner_->reduce_scatter_sum(in, scratch.data(), count, type);
    return reduction(std::move(inner), std::move(scratch), out);
  }
  dist::Request all_reduce_sum(void* data, std::size_t count, dist::DType type) override {
    std::vector<char> scratch(static_cast<char*>(data), static_cast<char*>(data) + count * dist::dtype_size(type));
    poison(data, scratch.size());
    dist::Request inner = inner_->all_reduce_sum(scratch.data(), count, type);
    return reduction(std::move(inner), std::move(scratch), data);
  }
  dist::Request broadcast(void* data, std::size_t count, dist::DType type, int root) override {
    return inner_->broadcast(data, count, type, root);
  }
  std::unique_ptr<dist::Collectives> split(int color, int key) override {
    return std::make_unique<SlowCollectives>(inner_->split(color, key), log_);
  }
  void progress() override { inner_->progress(); }
  void agree_sum(double* v, std::size_t n) override { inner_->agree_sum(v, n); }
  void agree_max(double* v, std::size_t n) override { inner_->agree_max(v, n); }
  void agree_sum(std::uint64_t* v, std::size_t n) override { inner_->agree_sum(v, n); }

 private:
  static void poison(void* data, std::size_t bytes) { std::memset(data, 0xff, bytes); }  // NaN in f32 and bf16
  dist::Request slow(dist::Request inner, std::vector<char> scratch, void* out, std::function<void()> on_done) {
    return dist::Request(std::make_unique<SlowPending>(std::move(inner), std::move(scratch), out,
                                                       log_.tests_to_complete, std::move(on_done)));
  }
  dist::Request reduction(dist::Request inner, std::vector<char> scratch, void* out) {
    ++log_.reductions;
    log_.reductions_beside_gathers += log_.gathers_in_flight > 0;
    log_.max_reductions_in_flight = std::max(log_.max_reductions_in_flight, ++log_.reductions_in_flight);
    return slow(std::move(inner), std::move(scratch), out, [this] { --log_.reductions_in_flight; });
  }

  std::unique_ptr<dist::Collectives> inner_;
  Recording& log_;
};

// Between the model and the store: after every hook call, the window must hold at most K units, and an
// acquired unit must come from a completed gather.
class CheckingAccess : public model::UnitAccess<float> {
 public:
  // recorded: the transport is the recording one.
  CheckingAccess(FsdpStore& store, const Recording& log, bool recorded, int k, bool reshard)
      : store_(store), log_(log), recorded_(recorded), k_(k), reshard_(reshard) {}
  const float* acquire(int unit) override {
    const float* p = store_.acquire(unit);
    const auto done = log_.gather_done.find(p);
    EXPECT_TRUE(!recorded_ || (done != log_.gather_done.end() && done->second)) << "unit " << unit << " handed out before its gather completed";
    acquires.push_back(unit);
    check();
    return p;
  }
  void release(int unit) override {
    store_.release(unit);
    check();
  }
  float* gradient(int unit) override {
    float* g = store_.gradient(unit);
    check();
    return g;
  }
  void grad_ready(int unit) override {
    store_.grad_ready(unit);
    check();
  }
  std::vector<int> acquires;
  int max_gathered = 0;

 private:
  void check() {
    const int gathered = reshard_ ? store_.gathered_units() : store_.gathers_in_flight();
    max_gathered = std::max(max_gathered, gathered);
    EXPECT_LE(gathered, k_);
    EXPECT_LE(log_.gathers_in_flight, k_);
  }
  FsdpStore& store_;
  const Recording& log_;
  bool recorded_;
  int k_;
  bool reshard_;
};

ModelConfig four_block_untied() {
  ModelConfig c = testing::tiny_model();
  c.n_layers = 4;
  c.tie_embeddings = false;
  return c;
}

struct Outcome {
  std::vector<double> losses;
  std::vector<int> gathered_units;  // in issue order
  int max_window = 0, max_reductions = 0;
  int max_gathers_on_wire = 0, reductions = 0, reductions_beside_gathers = 0;
};

Outcome train(int k, int r, bool reshard, bool slow, int steps) {
  const ModelConfig config = four_block_untied();
  Recording log;
  std::unique_ptr<dist::Collectives> comm = dist::make_collectives("mpi", *g_runtime);
  if (slow) comm = std::make_unique<SlowCollectives>(std::move(comm), log);
  StoreOptions options;
  options.strategy = "fsdp";
  options.max_inflight_units = k;
  options.max_inflight_reductions = r;
  options.reshard_after_forward = reshard;
  FsdpStore store(config, options, *comm);
  CheckingAccess access(store, log, slow, k, reshard);
  model::Model<float> model(config, model::Recompute::None, access);
  optim::AdamW optimizer(store.param_shards(), {});
  train::TrainOptions o;
  o.steps = steps;
  o.schedule.lr = 1e-2;
  o.schedule.warmup_steps = 1;
  train::Trainer trainer(o, model, store, optimizer, *comm);
  testing::RowSlice mine(2 * comm->size(), 2 * comm->rank(), 2);
  // No progress poller: requests advance only through the store's own calls, so what is in flight at each
  // hook call is a function of the call sequence alone and the test is deterministic.
  Outcome out;
  for (const auto& m : trainer.run(mine)) out.losses.push_back(m.loss);
  for (const void* in : log.gather_inputs)
    for (std::size_t u = 0; u < store.param_shards().size(); ++u)
      if (store.param_shards()[u].flat.data() == in) out.gathered_units.push_back(int(u));
  EXPECT_EQ(out.gathered_units.size(), log.gather_inputs.size()) << "a gather of something that is not a unit's shard";
  out.max_window = access.max_gathered;
  out.max_reductions = log.max_reductions_in_flight;
  out.max_gathers_on_wire = log.max_gathers_in_flight;
  out.reductions = log.reductions;
  out.reductions_beside_gathers = log.reductions_beside_gathers;
  return out;
}

TEST(GatherWindow, BoundsUnitsOrdersGathersAndWaitsBeforeUse) {
  const int steps = 3, units = 6;  // embedding, 4 blocks, head
  const Outcome fast = train(2, 2, true, false, steps);
  for (const bool reshard : {true, false})
    for (const int k : {1, 2, 4}) {
      SCOPED_TRACE("K = " + std::to_string(k) + (reshard ? ", resharding" : ", not resharding"));
      const Outcome slow = train(k, 2, reshard, true, steps);
      // Slow, poisoned transport, any window: the very same numbers.
      EXPECT_EQ(slow.losses, fast.losses);
      // One pass: forward 0..5, then (resharding) the blocks again in reverse, except the last K - 1
      // blocks of forward, which the window keeps gathered into backward; every pass the same.
      std::vector<int> pass = {0, 1, 2, 3, 4, 5};
      if (reshard)
        for (int block = 4 - (k - 1); block >= 1; --block) pass.push_back(block);
      std::vector<int> expected;
      for (int s = 0; s < steps; ++s) expected.insert(expected.end(), pass.begin(), pass.end());
      EXPECT_EQ(slow.gathered_units, expected);
      // The window fills up to K (prefetch happens) and never beyond (checked at every hook call).
      EXPECT_EQ(slow.max_window, std::min(k, units));
      EXPECT_EQ(slow.max_reductions, 2);
    }
}

// An evaluation pass (forward only) gathers no backward unit, and what it left gathered (the last blocks the
// window keeps for a backward that never comes) is dropped when the next pass starts: a training step after
// it gathers exactly a training pass and computes the same loss as without the evaluation.
TEST(GatherWindow, EvaluationPassGathersOnlyForward) {
  const ModelConfig config = four_block_untied();
  std::vector<double> losses;
  for (const bool evaluate : {false, true}) {
    Recording log;
    SlowCollectives comm(dist::make_collectives("mpi", *g_runtime), log);
    StoreOptions options;
    options.strategy = "fsdp";
    options.max_inflight_units = 2;
    FsdpStore store(config, options, comm);
    model::Model<float> model(config, model::Recompute::None, store);
    optim::AdamW optimizer(store.param_shards(), {});
    train::TrainOptions o;
    o.steps = 1;
    train::Trainer trainer(o, model, store, optimizer, comm);
    testing::RowSlice mine(2 * comm.size(), 2 * comm.rank(), 2);
    if (evaluate) {
      model.forward(testing::RowSlice(2 * comm.size(), 2 * comm.rank(), 2).next());
      EXPECT_EQ(log.gather_inputs.size(), 6u) << "the evaluation pass gathers each unit once, forward only";
      EXPECT_EQ(store.gathered_units(), 1) << "the last block stays gathered until the next pass";
    }
    const std::size_t before = log.gather_inputs.size();
    losses.push_back(trainer.train_step(mine).loss);
    EXPECT_EQ(log.gather_inputs.size() - before, 9u) << "a training pass at K = 2: 6 forward, 3 backward";
  }
  EXPECT_EQ(losses[0], losses[1]);
}

// The next pass's first gathers start during the optimizer step: each of the first K units is gathered as
// soon as it is updated, with its updated values, and they are complete when the step returns (nothing is
// in flight between steps); the pass then issues no gather for them again, and the losses are those of
// the default window. The step before the last only: after the last step no pass follows.
TEST(GatherWindow, OptimizerStepStartsTheNextPassGathers) {
  const ModelConfig config = four_block_untied();
  const std::vector<double> reference = train(2, 2, true, false, 3).losses;
  for (const int k : {1, 2, 4}) {
    SCOPED_TRACE("K = " + std::to_string(k));
    Recording log;
    SlowCollectives comm(dist::make_collectives("mpi", *g_runtime), log);
    StoreOptions options;
    options.strategy = "fsdp";
    options.max_inflight_units = k;
    FsdpStore store(config, options, comm);
    model::Model<float> model(config, model::Recompute::None, store);
    optim::AdamW optimizer(store.param_shards(), {});
    train::TrainOptions o;
    o.steps = 3;
    o.schedule.lr = 1e-2;
    o.schedule.warmup_steps = 1;
    train::Trainer trainer(o, model, store, optimizer, comm);
    testing::RowSlice mine(2 * comm.size(), 2 * comm.rank(), 2);
    const std::size_t pass = 6 + (4 - (k - 1));  // forward, then the blocks not kept into backward
    std::vector<double> losses;
    for (int s = 0; s < 3; ++s) {
      const std::size_t before = log.gather_inputs.size();
      losses.push_back(trainer.train_step(mine).loss);
      const std::size_t ahead = s + 1 < 3 ? std::size_t(k) : 0;
      // This step's pass, less what the previous step gathered for it, plus the next pass's first K units.
      EXPECT_EQ(log.gather_inputs.size() - before, pass - (s > 0 ? std::size_t(k) : 0) + ahead) << "step " << s;
      EXPECT_EQ(store.gathered_units(), int(ahead)) << "step " << s;
      EXPECT_EQ(store.gathers_in_flight(), 0) << "step " << s << ": a gather in flight between steps";
      for (std::size_t i = log.gather_inputs.size() - ahead; i < log.gather_inputs.size(); ++i) {
        const int unit = int(i - (log.gather_inputs.size() - ahead));
        const auto& shard = store.param_shards()[std::size_t(unit)].flat;
        EXPECT_EQ(log.gather_inputs[i], shard.data()) << "the next pass's gathers in pass order";
        EXPECT_EQ(std::memcmp(log.gather_sent[i].data(), shard.data(), shard.size() * sizeof(float)), 0)
            << "unit " << unit << " was gathered before its update";
      }
    }
    EXPECT_EQ(losses, reference);
  }
}

// Gathers come first on the wire: one at a time, and a reduction is started beside a gather only when compute
// must wait for it (R in flight); with R above the reductions of a pass, never.
TEST(GatherWindow, GathersGoFirstOnTheWire) {
  for (const int k : {2, 4}) {
    const Outcome slow = train(k, 8, true, true, 2);
    EXPECT_EQ(slow.max_gathers_on_wire, 1) << "K = " << k;
    EXPECT_EQ(slow.reductions, 12) << "K = " << k;
    EXPECT_EQ(slow.reductions_beside_gathers, 0) << "K = " << k;
  }
}

TEST(GatherWindow, ReductionsStayWithinR) {
  for (const int r : {1, 3}) {
    const Outcome slow = train(2, r, true, true, 2);
    EXPECT_EQ(slow.max_reductions, r) << "R = " << r;
  }
}

}  // namespace
}  // namespace llmtrain::parallel
