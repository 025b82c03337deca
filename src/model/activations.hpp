// Activation and scratch buffers of the decoder for one micro-batch shape (private to the model).
//
// Per block, the forward pass keeps what its backward pass reads (BlockActivations). With recompute =
// blocks only the residual stream between blocks is kept per layer and ONE BlockActivations is reused:
// the backward pass re-runs each block's forward into it just before differentiating the block.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <vector>

#include "llmtrain/core/model_config.hpp"

namespace llmtrain::model {

template <typename T>
struct BlockActivations {
  Kokkos::View<T*> rstd1, xn1, qkv, attn, lse, mid, rstd2, xn2, h13, hg;
  BlockActivations(const ModelConfig& c, std::int64_t batch, std::int64_t seq)
      : rstd1("rstd1", batch * seq),
        xn1("xn1", batch * seq * c.d_model),
        qkv("qkv", batch * seq * c.qkv_width()),
        attn("attn", batch * seq * c.d_model),
        lse("lse", batch * c.n_heads * seq),
        mid("mid", batch * seq * c.d_model),
        rstd2("rstd2", batch * seq),
        xn2("xn2", batch * seq * c.d_model),
        h13("h13", batch * seq * 2 * c.d_ff),
        hg("hg", batch * seq * c.d_ff) {}
  // Elements of the buffers above, for Model::own_bytes (fsdp_memory's test holds that figure to what the
  // model allocates).
  static std::int64_t elements(const ModelConfig& c, std::int64_t batch, std::int64_t seq) {
    const std::int64_t n = batch * seq;
    return 2 * n + 4 * n * c.d_model + n * c.qkv_width() + n * c.n_heads + 3 * n * c.d_ff;
  }
};

// Gradient scratch shared by all blocks (the backward pass handles one block at a time).
template <typename T>
struct BackwardScratch {
  Kokkos::View<T*> d_resid_a, d_resid_b, d_mid, d_xn, d_attn, d_qkv, d_hg, d_h13;
  BackwardScratch(const ModelConfig& c, std::int64_t n)
      : d_resid_a("d_resid_a", n * c.d_model),
        d_resid_b("d_resid_b", n * c.d_model),
        d_mid("d_mid", n * c.d_model),
        d_xn("d_xn", n * c.d_model),
        d_attn("d_attn", n * c.d_model),
        d_qkv("d_qkv", n * c.qkv_width()),
        d_hg("d_hg", n * c.d_ff),
        d_h13("d_h13", n * 2 * c.d_ff) {}
  // Elements of the buffers above, for Model::own_bytes.
  static std::int64_t elements(const ModelConfig& c, std::int64_t n) {
    return 5 * n * c.d_model + n * c.qkv_width() + 3 * n * c.d_ff;
  }
};

}  // namespace llmtrain::model
