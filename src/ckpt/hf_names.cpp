// Dataset <-> Hugging Face tensor names (see hf_names.hpp).
#include "hf_names.hpp"

#include <array>
#include <regex>
#include <utility>

#include "llmtrain/core/error.hpp"

namespace llmtrain::ckpt {
namespace {

// A block's tensors: our name, Hugging Face's name within model.layers.N.
constexpr std::array<std::pair<const char*, const char*>, 9> kBlock = {{
    {"wq", "self_attn.q_proj.weight"}, {"wk", "self_attn.k_proj.weight"}, {"wv", "self_attn.v_proj.weight"},
    {"wo", "self_attn.o_proj.weight"}, {"w1", "mlp.gate_proj.weight"},    {"w3", "mlp.up_proj.weight"},
    {"w2", "mlp.down_proj.weight"},    {"attn_norm", "input_layernorm.weight"},
    {"ffn_norm", "post_attention_layernorm.weight"}}};

constexpr std::array<std::pair<const char*, const char*>, 3> kOthers = {{
    {"/model/embedding/tok_embedding", "model.embed_tokens.weight"},
    {"/model/head/final_norm", "model.norm.weight"},
    {"/model/head/output", "lm_head.weight"}}};

}  // namespace

std::string hf_tensor_name(const std::string& dataset) {
  static const std::regex block_tensor(R"(/model/block\.(\d+)/(\w+))");
  std::smatch m;
  if (std::regex_match(dataset, m, block_tensor)) {
    for (const auto& [ours, theirs] : kBlock)
      if (m[2].str() == ours) return "model.layers." + m[1].str() + "." + theirs;
    LLMTRAIN_FAIL("export: no Hugging Face name for ", dataset);
  }
  for (const auto& [ours, theirs] : kOthers)
    if (dataset == ours) return theirs;
  LLMTRAIN_CHECK(dataset.rfind("/model/", 0) != 0, "export: no Hugging Face name for ", dataset);
  return "";
}

std::string dataset_of_hf_tensor(const std::string& hf_name) {
  static const std::regex layer_tensor(R"(model\.layers\.(\d+)\.(.+))");
  std::smatch m;
  if (std::regex_match(hf_name, m, layer_tensor)) {
    for (const auto& [ours, theirs] : kBlock)
      if (m[2].str() == theirs) return "/model/block." + m[1].str() + "/" + ours;
    return "";
  }
  for (const auto& [ours, theirs] : kOthers)
    if (hf_name == theirs) return ours;
  return "";
}

}  // namespace llmtrain::ckpt
