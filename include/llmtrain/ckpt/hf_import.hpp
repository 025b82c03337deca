// Reading a Hugging Face model directory (LlamaForCausalLM, MistralForCausalLM, GraniteForCausalLM): its
// config.json in either dialect (transformers 4: rope_theta, rope_scaling, torch_dtype; transformers 5:
// rope_parameters, dtype) as a ModelConfig, and its tensors (model.safetensors or the shards that
// model.safetensors.index.json names; F32, BF16 or F16) as whole parameter units. The tensor names map as
// the export's do (src/ckpt/hf_names.hpp), its exact inverse. job/hf_import.hpp writes the checkpoint.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "llmtrain/core/model_config.hpp"
#include "llmtrain/model/param_units.hpp"

namespace llmtrain::ckpt {

struct HfModel {
  std::string dir;
  std::string architecture;  // "LlamaForCausalLM", ...
  ModelConfig model;         // shape, norm, rotary and Granite settings; max_seq_len = max_position_embeddings
  std::int64_t max_position_embeddings = 0;
  std::optional<std::int64_t> bos_id, eos_id;  // the first id where config.json lists several
  std::string dtype;                           // config.json's (torch_dtype or dtype), "" if absent
};

// Reads dir/config.json. Refused, naming the field and its value: an architecture other than the three,
// attention or MLP biases, a hidden_act other than silu, a sliding_window below seq_len (0: the source's
// max_position_embeddings), a rope type other than default and llama3, a head_dim other than
// hidden_size / num_attention_heads.
HfModel read_hf_config(const std::string& dir, std::int64_t seq_len = 0);

// The tensors of dir as whole units of model::unit_layouts(source.model), widened to fp32 (exactly). Every
// tensor the model needs must be there with its shape; with tied embeddings an lm_head.weight is ignored; any
// other tensor (a bias, a rotary table) is refused by name.
std::vector<model::ParamUnit<float>> read_hf_tensors(const HfModel& source);

}  // namespace llmtrain::ckpt
