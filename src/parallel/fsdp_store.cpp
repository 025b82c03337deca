// The sharded parameter store and its gather window (see fsdp_store.hpp and docs/parallel.md).
//
// The window follows the order in which one training pass acquires units (forward 0..L, the head (and the
// tied embedding), then the blocks in reverse), as the model defines it (model::training_pass_order). A pass
// that departs from it (evaluation, which stops after the head) is noticed at the next acquire: the
// prefetched units nobody acquired are dropped and the window restarts there. Every decision to issue a collective depends only on
// the sequence of hook calls, never on timing (with reshard_after_forward = false, only on when a gather
// is seen complete, which changes when the next one is issued but not the order), so all ranks issue the
// same collectives in the same order on each communicator.
#include "llmtrain/parallel/fsdp_store.hpp"

#include <algorithm>
#include <cmath>
#include <deque>

#include "busy_clock.hpp"
#include "llmtrain/core/counted.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/model/init.hpp"
#include "llmtrain/model/unit_access.hpp"
#include "reduction_queue.hpp"
#include "wire.hpp"

namespace llmtrain::parallel {
namespace {

// queued: issued by the window, waiting for the wire (the gather before it is still running);
// in_flight: on the wire.
enum class Gather { none, queued, in_flight, ready };
bool on_wire(Gather g) { return g == Gather::queued || g == Gather::in_flight; }

struct Unit {
  std::string name;
  double gather_begin_us = 0, use_begin_us = 0;  // for the trace
  std::int64_t size = 0, chunk = 0;  // unpadded size; this rank's share of the padded size (chunk * S)
  Floats param, grad;                // this rank's chunk, zero past the unit's end
  Floats full;                       // the gathered unit (fp32), while gathered
  Wire16 param_wire, full_wire;      // bf16: the chunk sent and the landing buffer, while in flight
  dist::Request request;
  Gather gather = Gather::none;
  int acquired = 0;
  Floats grad_full;  // this micro-batch's whole gradient, between gradient() and grad_ready()
};

}  // namespace

struct FsdpStore::Impl {
  StoreOptions options;
  int world = 1, group = 1;  // data-parallel ranks; shard group size S
  std::unique_ptr<dist::Collectives> gathers, scatters, replicas;  // gathers and reductions on their own communicators
  std::vector<Unit> units;
  std::vector<int> order;          // acquire order of a training pass
  std::vector<int> next_use;       // per position: the next position of the same unit, or -1
  std::size_t first_backward = 0;  // first position of the backward blocks
  std::size_t cursor = 0;          // the position the next acquire is expected at
  std::size_t next_issue = 0;      // the next position the window considers
  std::vector<std::size_t> acquired_at;
  bool pass_has_gradients = false;  // backward gathers wait for proof that this pass is a training pass
  bool last_micro_batch = true;     // of the step (begin_micro_batch): hsdp's replica all-reduce runs in it
  // During the optimizer step (shard_updated): the window runs ahead for the next pass, but only over units
  // already updated; their bytes count towards that pass.
  bool preparing = false;
  std::vector<char> updated;
  std::int64_t prepared_bytes = 0;
  BusyClock gather_busy, reduce_busy, exposed, gather_wait;
  std::int64_t gather_bytes = 0;  // of the gathers issued since the last take_comm_times()
  std::deque<int> wire;           // units queued or in flight, in issue order; the front one is running
  Trace* trace = nullptr;
  std::unique_ptr<ReductionQueue> reductions;

  // While preparing, every gathered unit counts, even without resharding: the gathers issued during the
  // optimizer step must not depend on when earlier ones completed, since the step's end waits for them.
  int window_used() const {
    int n = 0;
    for (const Unit& u : units)
      n += options.reshard_after_forward || preparing ? u.gather != Gather::none : on_wire(u.gather);
    return n;
  }

  // The window issues a gather by queueing it; the queue puts one gather on the wire at a time, in issue
  // order, as collectives enqueued on one NCCL stream run. Two gathers sharing a link would both arrive
  // late, and the one needed first would wait for the one needed after it (at the start of each pass K = 2
  // issued the embedding and the first two blocks together). The order on the communicator is the issue
  // order on every rank; only when each gather starts depends on timing.
  void issue(int index) {
    Unit& u = units[std::size_t(index)];
    (preparing ? prepared_bytes : gather_bytes) +=
        ring_bytes(u.chunk * group * std::int64_t(dist::dtype_size(options.comm_dtype)), group);
    u.gather = Gather::queued;
    wire.push_back(index);
    advance_wire(false);
  }

  // Completes the running gather if it is done (or, with `block`, once it is) and starts the next queued
  // one; repeats while gathers complete.
  void advance_wire(bool block) {
    while (!wire.empty()) {
      Unit& front = units[std::size_t(wire.front())];
      if (front.gather == Gather::queued) start(front);
      if (block) front.request.wait();
      else if (!front.request.test()) break;
      complete(front);
      wire.pop_front();
      block = false;
    }
    gather_busy.set(!wire.empty());
  }

  // Compute waits for gathers: `wait` runs with the exposed and gather-wait clocks on, traced as one span
  // named after what it waits for.
  template <typename Wait>
  void wait_exposed(const std::string& what, Wait wait) {
    const double begin = trace ? trace->now_us() : 0;
    exposed.set(true);
    gather_wait.set(true);
    wait();
    exposed.set(false);
    gather_wait.set(false);
    if (trace) trace->span(Trace::compute, "wait: all_gather " + what, begin, trace->now_us());
  }

  // Runs the wire until `u`'s gather is complete (the gathers queued before it complete first).
  void finish(Unit& u) {
    while (on_wire(u.gather)) advance_wire(true);
  }

  void start(Unit& u) {
    const bool bf16 = options.comm_dtype == dist::DType::bf16;
    if (bf16) {
      u.param_wire = to_bf16(u.param, "param_wire");
      u.full_wire = Wire16(Kokkos::view_alloc(Kokkos::WithoutInitializing, "gather_wire"), u.chunk * group);
      Kokkos::fence();
      u.request = gathers->all_gather(u.param_wire.data(), u.full_wire.data(), std::size_t(u.chunk), dist::DType::bf16);
    } else {
      u.full = uninitialised_floats("gathered", u.chunk * group);
      u.request = gathers->all_gather(u.param.data(), u.full.data(), std::size_t(u.chunk), dist::DType::f32);
    }
    u.gather = Gather::in_flight;
    if (trace) u.gather_begin_us = trace->now_us();
  }

  // After the gather's request completed.
  void complete(Unit& u) {
    if (options.comm_dtype == dist::DType::bf16) {
      u.full = uninitialised_floats("gathered", u.chunk * group);
      from_bf16(u.full_wire, u.full, false);
      Kokkos::fence();
      u.param_wire = Wire16();
      u.full_wire = Wire16();
    }
    u.gather = Gather::ready;
    if (trace) trace->span(Trace::communication, "all_gather " + u.name, u.gather_begin_us, trace->now_us());
  }

  // A queued gather is run before it is dropped: every rank has issued it, so every rank must join it.
  void free(Unit& u) {
    finish(u);
    u.full = Floats();
    u.param_wire = Wire16();
    u.full_wire = Wire16();
    u.gather = Gather::none;
  }

  // Issues gathers in pass order while the window has room. A unit still gathered covers its position
  // (its release keeps it, release()) at no cost, even a backward position before the pass has asked for a
  // gradient: so the last forward blocks stay gathered into backward (K - 1 of them at most, as FSDP2 keeps
  // the last block) instead of being freed and gathered again while only the head computes.
  void fill_window() {
    while (next_issue < order.size()) {
      const int index = order[next_issue];
      if (units[std::size_t(index)].gather == Gather::none) {
        if (next_issue >= first_backward && !pass_has_gradients) break;
        if (preparing && !updated[std::size_t(index)]) break;
        if (window_used() >= options.max_inflight_units) break;
        issue(index);
      }
      ++next_issue;
    }
  }

  // A new pass, or a pass departing from the training order: drop what nobody holds and restart at `index`.
  void restart(int index) {
    for (Unit& u : units)
      if (u.acquired == 0 && u.gather != Gather::none) free(u);
    const auto found = std::find(order.begin(), order.end(), index);
    cursor = std::size_t(found - order.begin());
    next_issue = cursor;
    pass_has_gradients = false;
  }
};

FsdpStore::FsdpStore(const ModelConfig& config, const StoreOptions& options, dist::Collectives& world)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.options = options;
  m.world = world.size();
  const bool hsdp = options.strategy == "hsdp";
  LLMTRAIN_CHECK(hsdp || options.strategy == "fsdp", "parallel.strategy: the sharded store takes \"fsdp\" or \"hsdp\", got \"",
                 options.strategy, "\"");
  m.group = hsdp ? options.shard_group_size : m.world;
  LLMTRAIN_CHECK(m.group >= 1 && m.world % m.group == 0, "parallel.shard_group_size: ", options.shard_group_size,
                 " does not divide the ", counted(m.world, "rank"), " into shard groups");
  LLMTRAIN_CHECK(options.max_inflight_units >= 1, "parallel.max_inflight_units must be at least 1, got ",
                 options.max_inflight_units);
  LLMTRAIN_CHECK(options.comm_dtype == dist::DType::f32 || options.comm_dtype == dist::DType::bf16,
                 "parallel.comm_dtype: fp32 or bf16, got ", dist::dtype_name(options.comm_dtype));
  const int rank = world.rank(), color = rank / m.group, key = rank % m.group;
  m.gathers = world.split(color, key);
  m.scatters = world.split(color, key);
  if (m.world > m.group) m.replicas = world.split(key, color);
  // Gathers first on the link (reduction_queue.hpp): a reduction waits while a gather is queued or running.
  ReductionQueue::Link link{[&m] { return !m.wire.empty(); }, [&m] { m.advance_wire(false); }};
  m.reductions = std::make_unique<ReductionQueue>(options.max_inflight_reductions, options.comm_dtype, m.scatters.get(),
                                                  m.replicas.get(), m.reduce_busy, m.exposed, std::move(link));

  const auto layouts = model::unit_layouts(config);
  for (const auto& layout : layouts) {
    Unit u;
    u.name = layout.name;
    u.size = layout.size();
    u.chunk = (u.size + m.group - 1) / m.group;
    const std::int64_t begin = std::min(key * u.chunk, u.size), end = std::min(begin + u.chunk, u.size);
    u.param = Floats("param_shard." + layout.name, u.chunk);
    u.grad = Floats("grad_shard." + layout.name, u.chunk);
    auto host = Kokkos::create_mirror_view(u.param);
    model::init_unit_range(config, layout, begin, end, host.data());
    Kokkos::deep_copy(u.param, host);
    const auto mine = std::make_pair(std::int64_t(0), end - begin);
    param_shards_.push_back(model::ParamUnit<float>{layout, Kokkos::subview(u.param, mine), begin});
    grad_shards_.push_back(model::ParamUnit<float>{layout, Kokkos::subview(u.grad, mine), begin});
    m.units.push_back(std::move(u));
  }
  const model::AcquireOrder pass = model::training_pass_order(config);
  m.order = pass.units;
  m.first_backward = pass.first_backward;
  m.next_use.assign(m.order.size(), -1);
  for (std::size_t p = 0; p < m.order.size(); ++p)
    for (std::size_t q = p + 1; q < m.order.size() && m.next_use[p] < 0; ++q)
      if (m.order[q] == m.order[p]) m.next_use[p] = int(q);
  m.acquired_at.assign(layouts.size(), 0);
  m.cursor = m.order.size();
}

FsdpStore::~FsdpStore() = default;

std::string FsdpStore::strategy() const { return impl_->options.strategy; }

const float* FsdpStore::acquire(int index) {
  Impl& m = *impl_;
  m.trace = trace_;
  m.reductions->set_trace(trace_);
  LLMTRAIN_CHECK(index >= 0 && std::size_t(index) < m.units.size(), "acquire of unit ", index, " of ", m.units.size());
  if (m.preparing) {  // the optimizer step is over: its gathers are this pass's
    m.preparing = false;
    m.gather_bytes += m.prepared_bytes;
    m.prepared_bytes = 0;
  }
  if (m.cursor >= m.order.size() || m.order[m.cursor] != index) m.restart(index);
  const std::size_t position = m.cursor++;
  m.acquired_at[std::size_t(index)] = position;
  Unit& u = m.units[std::size_t(index)];
  if (m.next_issue <= position) {
    m.fill_window();
    // The window is full of units in use (the tied head at K = 1): this one is gathered anyway.
    if (u.gather == Gather::none) m.issue(index);
    m.next_issue = std::max(m.next_issue, position + 1);
  }
  ++u.acquired;
  if (u.gather != Gather::ready) {
    m.advance_wire(false);
    if (u.gather != Gather::ready) {
      m.wait_exposed(u.name, [&] { m.finish(u); });
    }
    m.fill_window();
    m.reductions->progress();  // the link may be free of gathers now
  }
  if (trace_ && u.acquired == 1) u.use_begin_us = trace_->now_us();
  return u.full.data();
}

void FsdpStore::release(int index) {
  Impl& m = *impl_;
  Unit& u = m.units[std::size_t(index)];
  LLMTRAIN_CHECK(u.acquired > 0, "release of unit ", index, " that is not acquired");
  if (--u.acquired > 0) return;
  if (trace_) trace_->span(Trace::compute, u.name, u.use_begin_us, trace_->now_us());
  const int next = m.next_use[m.acquired_at[std::size_t(index)]];
  // Kept when a later acquire in this pass needs it and either resharding is off or the window has already
  // counted it for that acquire.
  const bool keep = next >= 0 && (!m.options.reshard_after_forward || std::size_t(next) < m.next_issue);
  if (!keep) m.free(u);
  m.fill_window();
}

float* FsdpStore::gradient(int index) {
  Impl& m = *impl_;
  Unit& u = m.units[std::size_t(index)];
  if (u.grad_full.size() == 0) u.grad_full = Floats("grad_full", u.chunk * m.group);
  if (!m.pass_has_gradients) {
    m.pass_has_gradients = true;
    m.fill_window();
  }
  return u.grad_full.data();
}

void FsdpStore::grad_ready(int index) {
  Impl& m = *impl_;
  Unit& u = m.units[std::size_t(index)];
  // A unit whose gradient was never asked for contributes zeros: every rank must join the reduce-scatter.
  if (u.grad_full.size() == 0) u.grad_full = Floats("grad_full", u.chunk * m.group);
  Kokkos::fence();
  m.reductions->set_trace(trace_);
  // hsdp: the replica group's all-reduce once per step, in the last micro-batch (reduction_queue.hpp).
  using Into = ReductionQueue::Into;
  const Into how = m.last_micro_batch ? Into::fold_and_replicate : Into::accumulate_in_group;
  m.reductions->start(u.grad_full, u.grad, how, "reduce_scatter " + u.name);
  u.grad_full = Floats();
  m.reductions->progress();
}

// The optimizer updates units in index order, which is the start of the pass order (embedding, block 0,
// ...): each unit's gather for the next pass is issued as soon as it is updated and the window has room,
// so the pass's first gathers overlap the update of the remaining units instead of following it; each
// call also moves the wire on, as the progress poller does during compute. The last
// update completes them: nothing is in flight between steps, when hooks may use other transports (NCCL
// and MPI must not be in flight together, docs/architecture.md).
void FsdpStore::shard_updated(int index) {
  Impl& m = *impl_;
  m.trace = trace_;
  LLMTRAIN_CHECK(index >= 0 && std::size_t(index) < m.units.size(), "shard_updated of unit ", index, " of ",
                 m.units.size());
  if (!m.preparing) {
    m.restart(m.order.front());
    m.preparing = true;
    m.updated.assign(m.units.size(), 0);
  }
  m.updated[std::size_t(index)] = 1;
  // The optimizer does not poll: each update is the moment to notice a finished gather and start the
  // next (block 0's waits on the wire behind the embedding's).
  m.advance_wire(false);
  m.fill_window();
  if (std::size_t(index) + 1 == m.units.size() && !m.wire.empty()) {
    m.wait_exposed("(next pass)", [&] {
      while (!m.wire.empty()) m.advance_wire(true);
    });
  }
}

void FsdpStore::begin_micro_batch(bool last) { impl_->last_micro_batch = last; }

void FsdpStore::progress() {
  Impl& m = *impl_;
  m.advance_wire(false);
  m.reductions->progress();
  m.fill_window();
}

void FsdpStore::zero_gradients() {
  impl_->reductions->wait_all();
  for (Unit& u : impl_->units) Kokkos::deep_copy(u.grad, 0.0f);
}

void FsdpStore::reduce_gradients() {
  Impl& m = *impl_;
  m.reductions->wait_all();
  for (Unit& u : m.units) scale(u.grad, 1.0f / float(m.world));
  Kokkos::fence();
}

// Every shard group holds the whole gradient once (HSDP's replica groups hold equal copies), so one sum over
// the shard group counts every element exactly once.
double FsdpStore::grad_norm() {
  double sum = model::sum_of_squares(grad_shards_);
  impl_->scatters->agree_sum(&sum, 1);
  return std::sqrt(sum);
}

std::int64_t FsdpStore::shard_bytes() const {
  std::int64_t bytes = 0;
  for (std::size_t i = 0; i < impl_->units.size(); ++i)
    bytes += std::int64_t(sizeof(float)) * (2 * impl_->units[i].chunk + 2 * std::int64_t(param_shards_[i].flat.size()));
  return bytes;
}

CommTimes FsdpStore::take_comm_times() {
  Impl& m = *impl_;
  const std::int64_t gathered = m.gather_bytes;
  m.gather_bytes = 0;
  return {m.gather_busy.take(), m.reduce_busy.take(), m.exposed.take(), m.gather_wait.take(), gathered,
          m.reductions->take_bytes()};
}

int FsdpStore::gathered_units() const {
  int n = 0;
  for (const Unit& u : impl_->units) n += u.gather != Gather::none;
  return n;
}

int FsdpStore::gathers_in_flight() const { return int(impl_->wire.size()); }

}  // namespace llmtrain::parallel
