// Step time and exposed communication of the data-parallel strategies: run under mpirun (two ranks, one
// core each, on loopback or across perf/netns's rate-limited link; perf/fsdp_bench.sh runs the study).
//
// Usage: kUsage below (`fsdp_bench --help` prints it).
// The model is untied with a small vocabulary, so the blocks (the units the window moves) dominate.
// Rank 0 prints one line: the medians over the timed steps (after one warm-up step) of the step time, the
// time with a gather in flight, the time compute waited for gathers, the hidden share of gather time
// 1 - wait / gather, all time compute waited (gathers and reductions), the time with a reduction in
// flight, and the megabytes (1e6) this rank sent plus received per step in gathers and in reductions
// (parallel::CommTimes says how they are counted). --trace writes rank 0's Chrome trace of the timed steps
// (parallel/trace.hpp) to PATH, for perf/fsdp_bench.py.
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "llmtrain/core/comm_progress.hpp"
#include "llmtrain/dist/collectives.hpp"
#include "llmtrain/dist/runtime.hpp"
#include "llmtrain/model/blas_runtime.hpp"
#include "llmtrain/model/model.hpp"
#include "llmtrain/optim/adamw.hpp"
#include "llmtrain/parallel/store_options.hpp"
#include "llmtrain/parallel/trace.hpp"
#include "llmtrain/train/trainer.hpp"

using namespace llmtrain;

namespace {

constexpr const char* kUsage =
    "usage: fsdp_bench [--strategy replicated|fsdp|hsdp] [--k K] [--r R] [--reshard 0|1] [--progress-us N]\n"
    "                  [--comm-dtype fp32|bf16] [--steps N] [--rows N] [--seq N] [--d-model N] [--layers N]\n"
    "                  [--d-ff N] [--vocab N] [--trace PATH]   (under mpirun; perf/fsdp_bench.cpp says more)\n";

// Uniform random tokens: the benchmark times work, not learning.
class RandomTokens : public BatchSource {
 public:
  RandomTokens(std::int64_t rows, std::int64_t seq, std::int32_t vocab, std::uint64_t seed)
      : rows_(rows), seq_(seq), vocab_(vocab), rng_(seed) {}
  Batch next() override {
    Batch b;
    b.rows = rows_;
    b.seq_len = seq_;
    std::uniform_int_distribution<std::int32_t> token(0, vocab_ - 1);
    for (std::int64_t i = 0; i < rows_ * (seq_ + 1); ++i) {
      b.tokens.push_back(token(rng_));
      b.doc_index.push_back(0);
    }
    return b;
  }

 private:
  std::int64_t rows_, seq_;
  std::int32_t vocab_;
  std::mt19937_64 rng_;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  model::ensure_fast_blas_kernels(argv);
  dist::Runtime runtime(argc, argv);
  model::set_blas_threads(1);
  parallel::StoreOptions store;
  std::int64_t progress_us = 1000, steps = 5, rows = 2, seq = 128;
  std::string trace_path;
  ModelConfig config;
  config.vocab_size = 512;
  config.d_model = 512;
  config.n_layers = 6;
  config.n_heads = 8;
  config.n_kv_heads = 4;
  config.d_ff = 1536;
  config.tie_embeddings = false;
  for (int i = 1; i < argc; i += 2) {
    const std::string key = argv[i];
    if (key == "--help" || key == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (i + 1 == argc) {  // every other option takes a value: a lone one is not silently ignored
      std::fprintf(stderr, "fsdp_bench: %s needs a value (see the usage in perf/fsdp_bench.cpp)\n", key.c_str());
      return 2;
    }
    const std::string value = argv[i + 1];
    const long n = std::atol(value.c_str());
    if (key == "--strategy") store.strategy = value;
    else if (key == "--k") store.max_inflight_units = int(n);
    else if (key == "--r") store.max_inflight_reductions = int(n);
    else if (key == "--reshard") store.reshard_after_forward = n != 0;
    else if (key == "--progress-us") progress_us = n;
    else if (key == "--comm-dtype" && value == "fp32") store.comm_dtype = dist::DType::f32;
    else if (key == "--comm-dtype" && value == "bf16") store.comm_dtype = dist::DType::bf16;
    else if (key == "--steps") steps = n;
    else if (key == "--rows") rows = n;
    else if (key == "--seq") seq = n;
    else if (key == "--d-model") config.d_model = n;
    else if (key == "--layers") config.n_layers = n;
    else if (key == "--d-ff") config.d_ff = n;
    else if (key == "--vocab") config.vocab_size = n;
    else if (key == "--trace") trace_path = value;
    else {
      std::fprintf(stderr, "fsdp_bench: unknown option %s (see the usage in perf/fsdp_bench.cpp)\n", key.c_str());
      return 2;
    }
  }
  config.max_seq_len = seq;
  if (store.strategy == "hsdp") store.shard_group_size = 1;
  Kokkos::ScopeGuard kokkos;
  auto comm = dist::make_collectives("mpi", runtime);
  auto params = parallel::make_store(config, store, *comm);
  model::Model<float> model(config, model::Recompute::None, *params);
  optim::AdamW optimizer(params->param_shards(), {});
  train::TrainOptions options;
  options.steps = steps + 1;
  options.schedule.warmup_steps = 1;
  train::Trainer trainer(options, model, *params, optimizer, *comm);
  RandomTokens source(rows, seq, std::int32_t(config.vocab_size), 7 + std::uint64_t(comm->rank()));
  parallel::ParamStore& p = *params;
  const ProgressScope polling([&p] { p.progress(); }, progress_us);
  parallel::Trace trace(comm->rank());
  std::vector<double> step, gather, wait, exposed, reduce, compute, gather_mb, reduce_mb;
  for (std::int64_t s = 0; s <= steps; ++s) {
    const train::StepMetrics m = trainer.train_step(source);
    if (s == 0 && !trace_path.empty() && comm->rank() == 0) params->set_trace(&trace);
    if (s == 0) continue;
    step.push_back(m.step_s);
    compute.push_back(m.forward_s + m.backward_s);
    gather.push_back(m.gather_s);
    wait.push_back(m.gather_wait_s);
    exposed.push_back(m.exposed_s);
    reduce.push_back(m.reduce_s);
    gather_mb.push_back(double(m.gather_bytes) / 1e6);
    reduce_mb.push_back(double(m.reduce_bytes) / 1e6);
  }
  params->set_trace(nullptr);
  if (!trace_path.empty() && comm->rank() == 0) trace.write(trace_path);
  if (comm->rank() == 0) {
    const double g = median(gather), w = median(wait);
    std::printf("strategy %s K %d R %d reshard %d progress_us %lld comm %s | params %lld | step %.3f s | "
                "forward+backward %.3f s | gather %.3f s | gather wait %.3f s | hidden %.1f %% | all waits %.3f s | "
                "reduce %.3f s | gather bytes %.3f MB | reduce bytes %.3f MB\n",
                store.strategy.c_str(), store.max_inflight_units, store.max_inflight_reductions,
                int(store.reshard_after_forward), (long long)progress_us, dist::dtype_name(store.comm_dtype),
                (long long)config.parameter_count(), median(step), median(compute), g, w,
                g > 0 ? 100.0 * (1.0 - w / g) : 0.0, median(exposed), median(reduce), median(gather_mb),
                median(reduce_mb));
  }
  return 0;
}
