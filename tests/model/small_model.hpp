// The small decoder and batch the model tests share: two layers, grouped-query attention, document
// masks and one ignored target, small enough for finite differences in double.
#pragma once

#include "llmtrain/core/batch.hpp"
#include "llmtrain/core/model_config.hpp"

namespace llmtrain::model {

inline ModelConfig small_config(bool tied) {
  ModelConfig c;
  c.vocab_size = 11;
  c.d_model = 8;
  c.n_layers = 2;
  c.n_heads = 2;
  c.n_kv_heads = 1;
  c.d_ff = 12;
  c.max_seq_len = 8;
  c.tie_embeddings = tied;
  c.mask_documents = true;
  c.init_std = 0.3;  // large weights so that every path carries a visible gradient
  return c;
}

inline Batch small_batch() {
  Batch b;
  b.rows = 2;
  b.seq_len = 6;
  b.tokens = {1, 4, 7, 2, 9, 3, 5, /**/ 0, 10, 6, 8, 2, 4, -1};  // one ignored target
  b.doc_index = {0, 0, 0, 1, 1, 1, 1, /**/ 0, 0, 1, 1, 1, 2, 2};
  return b;
}

}  // namespace llmtrain::model
