// Model shapes of the benchmark presets; the same values as inputs/{tiny,small}.toml (model section).
#pragma once

#include <string>

#include "llmtrain/core/error.hpp"
#include "llmtrain/model/config.hpp"

namespace llmtrain::perf {

inline model::ModelConfig preset(const std::string& name) {
  model::ModelConfig c;
  c.vocab_size = 50257;  // GPT-2 tokenizer
  if (name == "tiny") {
    c.dim = 256;
    c.n_layers = 4;
    c.n_heads = 4;
    c.n_kv_heads = 4;
    c.ffn_hidden = 688;
    c.max_seq_len = 256;
  } else if (name == "small") {
    c.dim = 768;
    c.n_layers = 12;
    c.n_heads = 12;
    c.n_kv_heads = 4;
    c.ffn_hidden = 2048;
    c.max_seq_len = 1024;
  } else {
    LLMTRAIN_FAIL("unknown preset '", name, "' (tiny, small)");
  }
  return c;
}

}  // namespace llmtrain::perf
