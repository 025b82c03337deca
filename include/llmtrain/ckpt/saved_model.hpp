// The model a checkpoint holds, for tools that run it (llmtrain-generate): its configuration as the run
// built it, read back from the saved configuration, and its parameters whole on this process.
#pragma once

#include <string>
#include <vector>

#include "llmtrain/ckpt/checkpoint.hpp"
#include "llmtrain/core/model_config.hpp"
#include "llmtrain/model/param_units.hpp"

namespace llmtrain::ckpt {

// The saved [model] section resolved as the run resolved it: vocab_size 0 from the embedding's rows (the
// tokenizer's size when it was trained), n_kv_heads and d_ff by rule, max_seq_len = data.seq_len. Collective.
ModelConfig saved_model_config(Reader& reader);

// Every unit of `config` whole (begin 0), read from /model. Collective.
std::vector<model::ParamUnit<float>> read_parameters(Reader& reader, const ModelConfig& config);

}  // namespace llmtrain::ckpt
