// Test doubles for the trainer: a size-1 Collectives, a synthetic, learnable BatchSource, the small model
// the trainer tests train, and the parts a job would build around a trainer.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>

#include "llmtrain/core/batch.hpp"
#include "llmtrain/core/model_config.hpp"
#include "llmtrain/dist/collectives.hpp"
#include "llmtrain/model/local_units.hpp"
#include "llmtrain/model/model.hpp"
#include "llmtrain/optim/adamw.hpp"
#include "llmtrain/parallel/store_options.hpp"
#include "llmtrain/train/hooks.hpp"
#include "llmtrain/train/trainer.hpp"

namespace llmtrain::testing {

// Two blocks of width 32 over a 32-token vocabulary: learns PatternSource in a few dozen steps.
inline ModelConfig tiny_model() {
  ModelConfig c;
  c.vocab_size = 32;
  c.d_model = 32;
  c.n_layers = 2;
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.d_ff = 64;
  c.max_seq_len = 16;
  return c;
}

// One rank: every collective is the identity.
class SingleRankCollectives : public dist::Collectives {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string name() const override { return "single"; }
  dist::Request all_reduce_sum(void*, std::size_t, dist::DType) override { return {}; }
  dist::Request all_gather(const void* in, void* out, std::size_t count, dist::DType type) override {
    std::memcpy(out, in, count * dist::dtype_size(type));
    return {};
  }
  dist::Request reduce_scatter_sum(const void* in, void* out, std::size_t count, dist::DType type) override {
    std::memcpy(out, in, count * dist::dtype_size(type));
    return {};
  }
  dist::Request broadcast(void*, std::size_t, dist::DType, int) override { return {}; }
  std::unique_ptr<dist::Collectives> split(int, int) override { return std::make_unique<SingleRankCollectives>(); }
  void progress() override {}
  void agree_sum(double*, std::size_t) override {}
  void agree_max(double*, std::size_t) override {}
  void agree_sum(std::uint64_t*, std::size_t) override {}
};

// Rows follow a fixed rule next = (5 * token + 3) mod vocab from a random start, so a model can learn to
// predict every token but the first; the loss can fall from ln(vocab) towards ln(vocab)/seq_len.
class PatternSource : public BatchSource {
 public:
  PatternSource(std::int64_t rows, std::int64_t seq_len, std::int32_t vocab, std::uint64_t seed)
      : rows_(rows), seq_len_(seq_len), vocab_(vocab), rng_(seed) {}
  Batch next() override {
    Batch b;
    b.rows = rows_;
    b.seq_len = seq_len_;
    std::uniform_int_distribution<std::int32_t> start(0, vocab_ - 1);
    for (std::int64_t r = 0; r < rows_; ++r) {
      std::int32_t t = start(rng_);
      for (std::int64_t i = 0; i <= seq_len_; ++i) {
        b.tokens.push_back(t);
        b.doc_index.push_back(0);
        t = (5 * t + 3) % vocab_;
      }
    }
    return b;
  }

 private:
  std::int64_t rows_, seq_len_;
  std::int32_t vocab_;
  std::mt19937_64 rng_;
};

// Rows [first, first + count) of each global batch of PatternSource(total rows).
class RowSlice : public BatchSource {
 public:
  RowSlice(std::int64_t total_rows, std::int64_t first, std::int64_t count)
      : global_(total_rows, 16, 32, 99), first_(first), count_(count) {}
  Batch next() override {
    const Batch all = global_.next();
    Batch b;
    b.rows = count_;
    b.seq_len = all.seq_len;
    const auto width = all.row_width();
    b.tokens.assign(all.tokens.begin() + first_ * width, all.tokens.begin() + (first_ + count_) * width);
    return b;
  }

 private:
  PatternSource global_;
  std::int64_t first_, count_;
};

// What the job builds around a trainer, for tests: the store of `store_options` (replicated by default), the model over it, AdamW over its
// ranges, the trainer and the stop agreement hook.
struct TrainingRun {
  TrainingRun(const ModelConfig& config, const train::TrainOptions& options, dist::Collectives& comm,
              const std::string& recompute = "none", const optim::AdamWOptions& adamw = {},
              const parallel::StoreOptions& store_options = {}, model::Precision precision = model::Precision::Fp32)
      : store_ptr(parallel::make_store(config, store_options, comm)),
        store(*store_ptr),
        model(config, model::parse_recompute(recompute), store, precision),
        optimizer(store.param_shards(), adamw),
        trainer(options, model, store, optimizer, comm) {
    trainer.add_hook(stop);
  }
  std::unique_ptr<parallel::ParamStore> store_ptr;
  parallel::ParamStore& store;
  model::Model<float> model;
  optim::AdamW optimizer;
  train::Trainer trainer;
  train::StopAgreement stop;
};

}  // namespace llmtrain::testing
