// The key/value cache and the prefill / step driver of incremental decoding (see decoder.hpp).
#include "llmtrain/model/decoder.hpp"

#include <algorithm>

#include "attention.hpp"
#include "llmtrain/core/error.hpp"
#include "ops.hpp"

namespace llmtrain::model {

using ops::Index;
using ops::Range;

template <typename T>
KvCache<T>::KvCache(const ModelConfig& config, Index rows, Index capacity)
    : config_(config), rows_(rows), capacity_(capacity), length_(std::size_t(rows), 0) {
  LLMTRAIN_CHECK(rows > 0, "decoder: rows must be positive, got ", rows);
  LLMTRAIN_CHECK(capacity > 0 && capacity <= config.max_seq_len, "decoder: capacity ", capacity,
                 " must lie in [1, model.max_seq_len = ", config.max_seq_len, "]");
  const Index kv = config.n_kv_heads * config.head_dim();
  for (Index l = 0; l < config.n_layers; ++l) {
    k_.emplace_back("kv_cache.k", rows * capacity * kv);
    v_.emplace_back("kv_cache.v", rows * capacity * kv);
  }
  const Index group = config.n_heads / config.n_kv_heads;
  scores_ = Kokkos::View<T*>("kv_cache.scores", group * capacity);
  row_max_ = Kokkos::View<T*>("kv_cache.row_max", group);
  row_sum_ = Kokkos::View<T*>("kv_cache.row_sum", group);
  attend_length_ = Kokkos::View<Index*>("kv_cache.attend_length", rows);
}

template <typename T>
bool KvCache<T>::empty() const {
  return std::all_of(length_.begin(), length_.end(), [](Index n) { return n == 0; });
}

template <typename T>
void KvCache<T>::set_length(Index row, Index length) {
  LLMTRAIN_CHECK(length >= 0 && length <= capacity_, "decoder: length ", length, " outside [0, ", capacity_, "]");
  length_[std::size_t(row)] = length;
}

template <typename T>
void KvCache<T>::store(Index layer, const T* qkv, Index rows, Index seq) {
  const Index hd = config_.head_dim(), kv = config_.n_kv_heads * hd, W = config_.qkv_width();
  const Index key_at = config_.n_heads * hd, value_at = key_at + kv, cap = capacity_;
  LLMTRAIN_CHECK(rows <= rows_, "decoder: ", rows, " rows for a cache of ", rows_);
  LLMTRAIN_CHECK(seq <= cap, "decoder: a prefill of ", seq, " positions exceeds the cache's ", cap);
  T* k = k_[std::size_t(layer)].data();
  T* v = v_[std::size_t(layer)].data();
  Kokkos::parallel_for("kv_cache_store", Range(0, rows * seq), KOKKOS_LAMBDA(Index i) {
    const Index r = i / seq, t = i % seq;
    for (Index j = 0; j < kv; ++j) {
      k[(r * cap + t) * kv + j] = qkv[i * W + key_at + j];
      v[(r * cap + t) * kv + j] = qkv[i * W + value_at + j];
    }
  });
}

template <typename T>
void KvCache<T>::step(Index layer, T* out, T* qkv, Index rows, const T* rope_cos, const T* rope_sin,
                      Precision precision) {
  const auto& c = config_;
  const Index hd = c.head_dim(), half = hd / 2, kv = c.n_kv_heads * hd, W = c.qkv_width(), cap = capacity_;
  const Index key_at = c.n_heads * hd, value_at = key_at + kv;
  T* k = k_[std::size_t(layer)].data();
  T* v = v_[std::size_t(layer)].data();
  auto attend = Kokkos::create_mirror_view(attend_length_);
  LLMTRAIN_CHECK(rows <= rows_, "decoder: ", rows, " rows for a cache of ", rows_);
  for (Index r = 0; r < rows; ++r) {
    const Index p = length_[std::size_t(r)];
    LLMTRAIN_CHECK(p < cap, "decoder: row ", r, " is full (", cap, " positions)");
    // The training kernel on a one-row sequence whose table starts at position p.
    ops::rope_apply(qkv + r * W, rope_cos + p * half, rope_sin + p * half, 1, 1, W, c.n_heads + c.n_kv_heads, hd, +1);
    attend(r) = p + 1;
  }
  Kokkos::deep_copy(attend_length_, attend);
  const Index* len = attend_length_.data();
  Kokkos::parallel_for("kv_cache_append", Range(0, rows), KOKKOS_LAMBDA(Index r) {
    const Index at = (r * cap + len[r] - 1) * kv;
    for (Index j = 0; j < kv; ++j) {
      k[at + j] = qkv[r * W + key_at + j];
      v[at + j] = qkv[r * W + value_at + j];
    }
  });
  attention_decode(attention_shape(c, rows, 1), out, qkv, k, v, cap, attend.data(), scores_.data(), row_max_.data(),
                   row_sum_.data(), precision);
}

template <typename T>
Decoder<T>::Decoder(Model<T>& model, Index rows, Index capacity)
    : model_(model), cache_(model.config(), rows, capacity) {}

template <typename T>
std::vector<T> Decoder<T>::prefill(const std::vector<std::vector<TokenId>>& prompts) {
  const Index n = Index(prompts.size());
  LLMTRAIN_CHECK(n > 0 && n <= cache_.rows(), "decoder: ", n, " prompts for ", cache_.rows(), " rows");
  Index longest = 0;
  for (Index r = 0; r < n; ++r) {
    const Index len = Index(prompts[std::size_t(r)].size());
    LLMTRAIN_CHECK(len > 0 && len < cache_.capacity(), "decoder: prompt ", r, " has ", len,
                   " tokens; it must have at least 1 and fewer than ", cache_.capacity());
    longest = std::max(longest, len);
  }
  for (Index r = 0; r < cache_.rows(); ++r) cache_.set_length(r, 0);
  // Right-padded with the prompt's own first token: any id in the vocabulary serves, nothing attends to it.
  Batch batch;
  batch.rows = n;
  batch.seq_len = longest;
  batch.tokens.assign(std::size_t(n * (longest + 1)), model_.config().ignore_index);
  std::vector<Index> last(static_cast<std::size_t>(n));
  for (Index r = 0; r < n; ++r) {
    const auto& p = prompts[std::size_t(r)];
    for (Index t = 0; t < longest; ++t)
      batch.tokens[std::size_t(r * (longest + 1) + t)] = t < Index(p.size()) ? p[std::size_t(t)] : p[0];
    last[std::size_t(r)] = Index(p.size()) - 1;
  }
  // The cache's rows beyond n stay empty: Model::decode passes only the batch's rows.
  std::vector<T> logits = model_.decode(batch, cache_, last);
  for (Index r = 0; r < n; ++r) cache_.set_length(r, Index(prompts[std::size_t(r)].size()));
  active_ = n;
  return logits;
}

template <typename T>
std::vector<T> Decoder<T>::step(const std::vector<TokenId>& tokens) {
  LLMTRAIN_CHECK(active_ > 0, "decoder: step before prefill");
  LLMTRAIN_CHECK(Index(tokens.size()) == active_, "decoder: ", tokens.size(), " tokens for ", active_, " prompts");
  Batch batch;
  batch.rows = active_;
  batch.seq_len = 1;
  batch.tokens.assign(std::size_t(2 * active_), model_.config().ignore_index);
  for (Index r = 0; r < active_; ++r) batch.tokens[std::size_t(2 * r)] = tokens[std::size_t(r)];
  std::vector<T> logits = model_.decode(batch, cache_, std::vector<Index>(std::size_t(active_), 0));
  for (Index r = 0; r < active_; ++r) cache_.set_length(r, cache_.length(r) + 1);
  return logits;
}

template class KvCache<float>;
template class KvCache<double>;
template class Decoder<float>;
template class Decoder<double>;

}  // namespace llmtrain::model
