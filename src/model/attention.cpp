// Tiled causal attention, forward and backward (see attention.hpp for the scheme and layout).
#include "attention.hpp"

#include <cmath>
#include <limits>

#include "fast_math.hpp"
#include "llmtrain/model/gemm.hpp"
#include "ops.hpp"

namespace llmtrain::model {

using ops::Index;
using ops::Range;

template <typename T>
Attention<T>::Attention(const AttentionShape& shape)
    : shape_(shape),
      scores_("attention.scores", shape.tile * shape.tile),
      dscores_("attention.dscores", shape.tile * shape.tile),
      row_max_("attention.row_max", shape.tile),
      row_sum_("attention.row_sum", shape.tile),
      row_delta_("attention.row_delta", shape.tile) {}

namespace {

// True when query position q may attend to key position k of the same row.
KOKKOS_INLINE_FUNCTION bool visible(Index q, Index k, const std::int32_t* doc) {
  return k <= q && (doc == nullptr || doc[k] == doc[q]);
}

}  // namespace

template <typename T>
void Attention<T>::forward(T* out, T* lse, const T* qkv, const std::int32_t* doc) {
  const auto& s = shape_;
  const Index W = s.width(), hd = s.head_dim, ldo = s.n_heads * hd, tile = s.tile;
  const Index group = s.n_heads / s.n_kv_heads;
  const T scale = T(1) / std::sqrt(T(hd));
  const T neg_inf = -std::numeric_limits<T>::infinity();
  T* S = scores_.data();
  T* m = row_max_.data();
  T* l = row_sum_.data();
  for (Index b = 0; b < s.batch; ++b) {
    const std::int32_t* row_doc = doc ? doc + b * s.seq_len : nullptr;
    for (Index h = 0; h < s.n_heads; ++h) {
      const Index kv = h / group;
      const T* q = qkv + b * s.seq_len * W + h * hd;
      const T* k = qkv + b * s.seq_len * W + (s.n_heads + kv) * hd;
      const T* v = qkv + b * s.seq_len * W + (s.n_heads + s.n_kv_heads + kv) * hd;
      T* o = out + b * s.seq_len * ldo + h * hd;
      T* row_lse = lse + (b * s.n_heads + h) * s.seq_len;
      for (Index qs = 0; qs < s.seq_len; qs += tile) {
        const Index tq = std::min(tile, s.seq_len - qs);
        Kokkos::parallel_for("attention_init", Range(0, tq), KOKKOS_LAMBDA(Index i) {
          m[i] = neg_inf;
          l[i] = 0;
          for (Index d = 0; d < hd; ++d) o[(qs + i) * ldo + d] = 0;
        });
        for (Index ks = 0; ks < qs + tq; ks += tile) {  // causal: key tiles up to the query tile's end
          const Index tk = std::min(tile, s.seq_len - ks);
          gemm<T>(Trans::No, Trans::Yes, tq, tk, hd, T(1), q + qs * W, W, k + ks * W, W, T(0), S, tk);
          // Online softmax: rescale what is accumulated so far to the new row maximum.
          const bool needs_mask = ks + tk - 1 > qs || row_doc != nullptr;  // else every key is visible
          Kokkos::parallel_for("attention_softmax_tile", Range(0, tq), KOKKOS_LAMBDA(Index i) {
            T* Si = S + i * tk;
            for (Index j = 0; j < tk; ++j) Si[j] *= scale;
            if (needs_mask)
              for (Index j = 0; j < tk; ++j) Si[j] = visible(qs + i, ks + j, row_doc) ? Si[j] : neg_inf;
            const T tile_max = fast::row_max(Si, tk);
            const T new_max = tile_max > m[i] ? tile_max : m[i];
            if (new_max == neg_inf) {  // nothing visible yet in this row
              for (Index j = 0; j < tk; ++j) Si[j] = 0;
              return;
            }
            const T alpha = fast::exp(m[i] - new_max);
            l[i] = l[i] * alpha + fast::exp_shifted_sum(Si, tk, new_max);
            m[i] = new_max;
            for (Index d = 0; d < hd; ++d) o[(qs + i) * ldo + d] *= alpha;
          });
          gemm<T>(Trans::No, Trans::No, tq, hd, tk, T(1), S, tk, v + ks * W, W, T(1), o + qs * ldo, ldo);
        }
        Kokkos::parallel_for("attention_finish", Range(0, tq), KOKKOS_LAMBDA(Index i) {
          for (Index d = 0; d < hd; ++d) o[(qs + i) * ldo + d] /= l[i];
          row_lse[qs + i] = m[i] + std::log(l[i]);
        });
      }
    }
  }
}

template <typename T>
void Attention<T>::backward(T* dqkv, const T* dout, const T* out, const T* lse, const T* qkv,
                            const std::int32_t* doc) {
  const auto& s = shape_;
  const Index W = s.width(), hd = s.head_dim, ldo = s.n_heads * hd, tile = s.tile;
  const Index group = s.n_heads / s.n_kv_heads;
  const T scale = T(1) / std::sqrt(T(hd));
  T* P = scores_.data();
  T* dS = dscores_.data();
  T* delta = row_delta_.data();
  ops::fill(dqkv, T(0), s.batch * s.seq_len * W);
  for (Index b = 0; b < s.batch; ++b) {
    const std::int32_t* row_doc = doc ? doc + b * s.seq_len : nullptr;
    for (Index h = 0; h < s.n_heads; ++h) {
      const Index kv = h / group;
      const Index base = b * s.seq_len * W;
      const T* q = qkv + base + h * hd;
      const T* k = qkv + base + (s.n_heads + kv) * hd;
      const T* v = qkv + base + (s.n_heads + s.n_kv_heads + kv) * hd;
      T* dq = dqkv + base + h * hd;
      T* dk = dqkv + base + (s.n_heads + kv) * hd;
      T* dv = dqkv + base + (s.n_heads + s.n_kv_heads + kv) * hd;
      const T* o = out + b * s.seq_len * ldo + h * hd;
      const T* dO = dout + b * s.seq_len * ldo + h * hd;
      const T* row_lse = lse + (b * s.n_heads + h) * s.seq_len;
      for (Index qs = 0; qs < s.seq_len; qs += tile) {
        const Index tq = std::min(tile, s.seq_len - qs);
        Kokkos::parallel_for("attention_delta", Range(0, tq), KOKKOS_LAMBDA(Index i) {
          T sum = 0;
          for (Index d = 0; d < hd; ++d) sum += dO[(qs + i) * ldo + d] * o[(qs + i) * ldo + d];
          delta[i] = sum;
        });
        for (Index ks = 0; ks < qs + tq; ks += tile) {
          const Index tk = std::min(tile, s.seq_len - ks);
          gemm<T>(Trans::No, Trans::Yes, tq, tk, hd, T(1), q + qs * W, W, k + ks * W, W, T(0), P, tk);
          const bool needs_mask = ks + tk - 1 > qs || row_doc != nullptr;
          Kokkos::parallel_for("attention_probs", Range(0, tq), KOKKOS_LAMBDA(Index i) {
            T* Pi = P + i * tk;
            const T shift = row_lse[qs + i];
            for (Index j = 0; j < tk; ++j) Pi[j] = fast::exp(Pi[j] * scale - shift);
            if (needs_mask)
              for (Index j = 0; j < tk; ++j) Pi[j] = visible(qs + i, ks + j, row_doc) ? Pi[j] : T(0);
          });
          gemm<T>(Trans::Yes, Trans::No, tk, hd, tq, T(1), P, tk, dO + qs * ldo, ldo, T(1), dv + ks * W, W);
          gemm<T>(Trans::No, Trans::Yes, tq, tk, hd, T(1), dO + qs * ldo, ldo, v + ks * W, W, T(0), dS, tk);
          Kokkos::parallel_for("attention_dscores", Range(0, tq), KOKKOS_LAMBDA(Index i) {
            for (Index j = 0; j < tk; ++j) dS[i * tk + j] = P[i * tk + j] * (dS[i * tk + j] - delta[i]) * scale;
          });
          gemm<T>(Trans::No, Trans::No, tq, hd, tk, T(1), dS, tk, k + ks * W, W, T(1), dq + qs * W, W);
          gemm<T>(Trans::Yes, Trans::No, tk, hd, tq, T(1), dS, tk, q + qs * W, W, T(1), dk + ks * W, W);
        }
      }
    }
  }
}

template class Attention<float>;
template class Attention<double>;

}  // namespace llmtrain::model
