// Model shapes of the benchmark presets: inputs/tiny.toml's, and inputs/small.toml's with grouped-query
// attention (4 KV heads, the value proposed for the preset; 114.1 M parameters).
#pragma once

#include <string>

#include "llmtrain/core/error.hpp"
#include "llmtrain/core/model_config.hpp"

namespace llmtrain::perf {

inline ModelConfig preset(const std::string& name) {
  ModelConfig c;
  c.vocab_size = 50257;  // GPT-2 tokenizer
  if (name == "tiny") {
    c.d_model = 128;
    c.n_layers = 4;
    c.n_heads = 4;
    c.n_kv_heads = 2;
    c.d_ff = 384;
    c.max_seq_len = 128;
  } else if (name == "small") {
    c.d_model = 768;
    c.n_layers = 12;
    c.n_heads = 12;
    c.n_kv_heads = 4;
    c.d_ff = 2048;
    c.max_seq_len = 1024;
  } else {
    LLMTRAIN_FAIL("unknown preset '", name, "' (tiny, small)");
  }
  return c;
}

}  // namespace llmtrain::perf
