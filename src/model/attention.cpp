// Tiled causal attention, forward and backward (see attention.hpp for the scheme and layout).
#include "attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "llmtrain/core/error.hpp"
#include "llmtrain/model/gemm.hpp"
#include "ops.hpp"

namespace llmtrain::model {

using ops::Index;
using ops::Range;

AttentionShape attention_shape(const ModelConfig& c, Index batch, Index seq) {
  return AttentionShape{batch, seq, c.n_heads, c.n_kv_heads, c.head_dim(), std::min<Index>(128, seq),
                        c.attention_multiplier};
}

template <typename T>
T attention_score_scale(const AttentionShape& shape) {
  return shape.scale > 0 ? T(shape.scale) : T(1) / std::sqrt(T(shape.head_dim));
}

namespace {
// Online softmax over a tile of scores [tq, tk] (rows of queries qs.., keys ks..): see attention_softmax_row.
template <typename T>
void softmax_tile(T* S, T* m, T* l, T* o, Index ldo, Index tq, Index tk, Index hd, T scale, Index qs, Index ks,
                  bool needs_mask, const std::int32_t* row_doc) {
  if constexpr (ops::kHostFloat<T>) {
    isa::kernels().attention_softmax_tile(S, m, l, o, ldo, tq, tk, hd, scale, qs, ks, needs_mask, row_doc);
  } else {
    Kokkos::parallel_for("attention_softmax_tile", Range(0, tq), KOKKOS_LAMBDA(Index i) {
      ops::attention_softmax_row(S + i * tk, m + i, l + i, o + i * ldo, tk, hd, scale, qs + i, ks, needs_mask,
                                 row_doc);
    });
  }
}
}  // namespace

template <typename T>
Attention<T>::Attention(const AttentionShape& shape, Precision precision)
    : shape_(shape),
      precision_(precision),
      scores_("attention.scores", shape.tile * shape.tile),
      dscores_("attention.dscores", shape.tile * shape.tile),
      row_max_("attention.row_max", shape.tile),
      row_sum_("attention.row_sum", shape.tile),
      row_delta_("attention.row_delta", shape.tile) {
  LLMTRAIN_CHECK((std::is_same_v<T, float>) || precision == Precision::Fp32,
                 "bf16 attention products are for float only (the double attention backs the gradient checks)");
}

template <typename T>
void Attention<T>::forward(T* out, T* lse, const T* qkv, const std::int32_t* doc) {
  const auto& s = shape_;
  const Index W = s.width(), hd = s.head_dim, ldo = s.n_heads * hd, tile = s.tile;
  const Index group = s.n_heads / s.n_kv_heads;
  const T scale = attention_score_scale<T>(s);
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
          m[i] = -std::numeric_limits<T>::infinity();
          l[i] = 0;
          for (Index d = 0; d < hd; ++d) o[(qs + i) * ldo + d] = 0;
        });
        for (Index ks = 0; ks < qs + tq; ks += tile) {  // causal: key tiles up to the query tile's end
          const Index tk = std::min(tile, s.seq_len - ks);
          gemm<T>(Trans::No, Trans::Yes, tq, tk, hd, T(1), q + qs * W, W, k + ks * W, W, T(0), S, tk, precision_);
          // Online softmax: rescale what is accumulated so far to the new row maximum.
          const bool needs_mask = ks + tk - 1 > qs || row_doc != nullptr;  // else every key is visible
          softmax_tile(S, m, l, o + qs * ldo, ldo, tq, tk, hd, scale, qs, ks, needs_mask, row_doc);
          gemm<T>(Trans::No, Trans::No, tq, hd, tk, T(1), S, tk, v + ks * W, W, T(1), o + qs * ldo, ldo, precision_);
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
  const T scale = attention_score_scale<T>(s);
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
          gemm<T>(Trans::No, Trans::Yes, tq, tk, hd, T(1), q + qs * W, W, k + ks * W, W, T(0), P, tk, precision_);
          const bool needs_mask = ks + tk - 1 > qs || row_doc != nullptr;
          if constexpr (ops::kHostFloat<T>) {
            isa::kernels().attention_probs_tile(P, row_lse + qs, tq, tk, scale, qs, ks, needs_mask, row_doc);
          } else {
            Kokkos::parallel_for("attention_probs", Range(0, tq), KOKKOS_LAMBDA(Index i) {
              ops::attention_probs_row(P + i * tk, row_lse[qs + i], tk, scale, qs + i, ks, needs_mask, row_doc);
            });
          }
          gemm<T>(Trans::Yes, Trans::No, tk, hd, tq, T(1), P, tk, dO + qs * ldo, ldo, T(1), dv + ks * W, W, precision_);
          gemm<T>(Trans::No, Trans::Yes, tq, tk, hd, T(1), dO + qs * ldo, ldo, v + ks * W, W, T(0), dS, tk, precision_);
          if constexpr (ops::kHostFloat<T>) {
            isa::kernels().attention_dscores_tile(dS, P, delta, tq, tk, scale);
          } else {
            Kokkos::parallel_for("attention_dscores", Range(0, tq), KOKKOS_LAMBDA(Index i) {
              ops::attention_dscores_row(dS + i * tk, P + i * tk, delta[i], tk, scale);
            });
          }
          gemm<T>(Trans::No, Trans::No, tq, hd, tk, T(1), dS, tk, k + ks * W, W, T(1), dq + qs * W, W, precision_);
          gemm<T>(Trans::Yes, Trans::No, tk, hd, tq, T(1), dS, tk, q + qs * W, W, T(1), dk + ks * W, W, precision_);
        }
      }
    }
  }
}

template <typename T>
void attention_decode(const AttentionShape& s, T* out, const T* qkv, const T* k, const T* v, Index capacity,
                      const Index* length, T* S, T* m, T* l, Precision precision) {
  const Index W = s.width(), hd = s.head_dim, ldo = s.n_heads * hd, ldkv = s.n_kv_heads * hd;
  const Index group = s.n_heads / s.n_kv_heads;
  const T scale = attention_score_scale<T>(s);
  for (Index b = 0; b < s.batch; ++b) {
    const Index len = length[b];
    for (Index kv = 0; kv < s.n_kv_heads; ++kv) {
      // The group's queries are consecutive heads of the row: a [group, hd] matrix with leading dimension hd.
      const T* q = qkv + b * W + kv * group * hd;
      const T* kb = k + b * capacity * ldkv + kv * hd;
      const T* vb = v + b * capacity * ldkv + kv * hd;
      T* o = out + b * ldo + kv * group * hd;
      Kokkos::parallel_for("attention_decode_init", Range(0, group), KOKKOS_LAMBDA(Index i) {
        m[i] = -std::numeric_limits<T>::infinity();
        l[i] = 0;
        for (Index d = 0; d < hd; ++d) o[i * hd + d] = 0;
      });
      // One tile of every cached key: the new token is the last, so nothing is masked.
      gemm<T>(Trans::No, Trans::Yes, group, len, hd, T(1), q, hd, kb, ldkv, T(0), S, len, precision);
      softmax_tile(S, m, l, o, hd, group, len, hd, scale, len - 1, Index(0), false,
                   static_cast<const std::int32_t*>(nullptr));
      gemm<T>(Trans::No, Trans::No, group, hd, len, T(1), S, len, vb, ldkv, T(1), o, hd, precision);
      Kokkos::parallel_for("attention_decode_finish", Range(0, group), KOKKOS_LAMBDA(Index i) {
        for (Index d = 0; d < hd; ++d) o[i * hd + d] /= l[i];
      });
    }
  }
}

template float attention_score_scale<float>(const AttentionShape&);
template double attention_score_scale<double>(const AttentionShape&);
template void attention_decode<float>(const AttentionShape&, float*, const float*, const float*, const float*, Index,
                                      const Index*, float*, float*, float*, Precision);
template void attention_decode<double>(const AttentionShape&, double*, const double*, const double*, const double*,
                                       Index, const Index*, double*, double*, double*, Precision);
template class Attention<float>;
template class Attention<double>;

}  // namespace llmtrain::model
