// Incremental decoding: a batch of prompts prefilled once, then one token per prompt and step, with every
// block's keys and values kept in a cache so that a step costs one position, not the whole sequence.
//
// The decoder runs the model's own forward pass (Model::decode): the same embedding, norms, rotary tables,
// products, SwiGLU and head as training, so every model setting applies to both. Only attention differs in a
// step: the new token's query meets the cached keys (attention_decode, beside the training attention). The
// prompts of a batch may differ in length: they are prefilled together, right-padded, and each continues at
// its own position (causal attention never lets a prompt see its padding; a step overwrites it).
//
// The model's parameters are reached through its unit store as in a forward pass, so under fsdp every rank
// must decode the same tokens together.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <vector>

#include "llmtrain/core/batch.hpp"
#include "llmtrain/core/model_config.hpp"
#include "llmtrain/model/model.hpp"

namespace llmtrain::model {

// Every block's rotated keys and values of `rows` sequences of up to `capacity` positions:
// k[layer], v[layer] are [rows, capacity, n_kv_heads * head_dim]. Row r holds length(r) positions.
template <typename T>
class KvCache {
 public:
  KvCache(const ModelConfig& config, std::int64_t rows, std::int64_t capacity);

  std::int64_t rows() const { return rows_; }
  std::int64_t capacity() const { return capacity_; }
  std::int64_t length(std::int64_t row) const { return length_[std::size_t(row)]; }
  bool empty() const;
  void set_length(std::int64_t row, std::int64_t length);

  // Model::decode's two uses. Prefill: keeps the keys and values of positions [0, seq) of each row of a
  // [rows * seq, width] QKV buffer (rotated). Step: rotates the queries and keys of a [rows, width] buffer
  // to each row's position length(r), appends the key and value there, and attends over [0, length(r)].
  // Both act on the first `rows` rows of the cache.
  void store(std::int64_t layer, const T* qkv, std::int64_t rows, std::int64_t seq);
  void step(std::int64_t layer, T* out, T* qkv, std::int64_t rows, const T* rope_cos, const T* rope_sin,
            Precision precision);

 private:
  ModelConfig config_;
  std::int64_t rows_, capacity_;
  std::vector<std::int64_t> length_;  // host
  std::vector<Kokkos::View<T*>> k_, v_;
  Kokkos::View<T*> scores_, row_max_, row_sum_;
  Kokkos::View<std::int64_t*> attend_length_;  // length(r) + 1 during a step
};

template <typename T>
class Decoder {
 public:
  // Up to `rows` prompts at a time, each at most `capacity` (<= model.max_seq_len) positions long with its
  // continuation.
  Decoder(Model<T>& model, std::int64_t rows, std::int64_t capacity);

  // Starts over with these prompts (1 to rows of them, each non-empty and shorter than capacity). Returns
  // the logits [prompts, vocab] of each prompt's last token.
  std::vector<T> prefill(const std::vector<std::vector<TokenId>>& prompts);
  // Appends one token to each prompt (at its position length(r)); returns the logits [prompts, vocab] there.
  std::vector<T> step(const std::vector<TokenId>& tokens);
  // Positions held for prompt r (its prompt and the tokens stepped so far).
  std::int64_t length(std::int64_t r) const { return cache_.length(r); }
  std::int64_t capacity() const { return cache_.capacity(); }

 private:
  Model<T>& model_;
  KvCache<T> cache_;
  std::int64_t active_ = 0;  // prompts of the current prefill
};

}  // namespace llmtrain::model
