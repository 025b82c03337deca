// Activation and scratch buffers of the decoder for one micro-batch shape, in the backend's memory (private to
// the model).
//
// Per block, the forward pass keeps what its backward pass reads (BlockActivations). With recompute =
// blocks only the residual stream between blocks is kept per layer and ONE BlockActivations is reused:
// the backward pass re-runs each block's forward into it just before differentiating the block.
#pragma once

#include <cstdint>

#include "llmtrain/core/model_config.hpp"
#include "llmtrain/model/buffer.hpp"

namespace llmtrain::model {

template <typename T>
struct BlockActivations {
  Buffer<T> rstd1, xn1, qkv, attn, lse, mid, rstd2, xn2, h13, hg;
  BlockActivations(Memory& m, const ModelConfig& c, std::int64_t batch, std::int64_t seq)
      : rstd1(m, batch * seq, "rstd1"),
        xn1(m, batch * seq * c.d_model, "xn1"),
        qkv(m, batch * seq * c.qkv_width(), "qkv"),
        attn(m, batch * seq * c.d_model, "attn"),
        lse(m, batch * c.n_heads * seq, "lse"),
        mid(m, batch * seq * c.d_model, "mid"),
        rstd2(m, batch * seq, "rstd2"),
        xn2(m, batch * seq * c.d_model, "xn2"),
        h13(m, batch * seq * 2 * c.d_ff, "h13"),
        hg(m, batch * seq * c.d_ff, "hg") {}
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
  Buffer<T> d_resid_a, d_resid_b, d_mid, d_xn, d_attn, d_qkv, d_hg, d_h13;
  BackwardScratch(Memory& m, const ModelConfig& c, std::int64_t n)
      : d_resid_a(m, n * c.d_model, "d_resid_a"),
        d_resid_b(m, n * c.d_model, "d_resid_b"),
        d_mid(m, n * c.d_model, "d_mid"),
        d_xn(m, n * c.d_model, "d_xn"),
        d_attn(m, n * c.d_model, "d_attn"),
        d_qkv(m, n * c.qkv_width(), "d_qkv"),
        d_hg(m, n * c.d_ff, "d_hg"),
        d_h13(m, n * 2 * c.d_ff, "d_h13") {}
  // Elements of the buffers above, for Model::own_bytes.
  static std::int64_t elements(const ModelConfig& c, std::int64_t n) {
    return 5 * n * c.d_model + n * c.qkv_width() + 3 * n * c.d_ff;
  }
};

}  // namespace llmtrain::model
