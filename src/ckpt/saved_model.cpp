// A checkpoint's model configuration and whole parameters (see saved_model.hpp).
#include "llmtrain/ckpt/saved_model.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <iterator>

#include "llmtrain/core/error.hpp"

namespace llmtrain::ckpt {

namespace {
template <typename T>
T setting(const toml::table& config, const char* section, const char* key, const std::string& path) {
  const auto value = config[section][key].value<T>();
  LLMTRAIN_CHECK(value.has_value(), path, ": the saved configuration has no ", section, ".", key);
  return *value;
}
// A setting newer than some checkpoints: those written before it existed ran with its default.
template <typename T>
T setting_or(const toml::table& config, const char* section, const char* key, T fallback) {
  return config[section][key].value<T>().value_or(fallback);
}
}  // namespace

ModelConfig saved_model_config(Reader& reader) {
  const std::string& path = reader.path();
  toml::table saved;
  try {
    saved = toml::parse(reader.metadata().config);
  } catch (const toml::parse_error& e) {
    LLMTRAIN_FAIL(path, ": the saved configuration does not parse: ", e.description());
  }
  // Every key of the section must be read below: a model setting this reader skipped would run another model.
  static const char* const known[] = {"vocab_size", "d_model",        "n_layers", "n_heads", "n_kv_heads", "d_ff",
                                      "rope_theta", "norm_eps",       "tie_embeddings", "mask_documents", "init_std",
                                      "seed", "max_position_embeddings", "embedding_multiplier",
                                      "residual_multiplier", "attention_multiplier", "logits_scaling", "rope_type",
                                      "rope_factor", "rope_low_freq_factor", "rope_high_freq_factor",
                                      "rope_original_max_position_embeddings"};
  if (const toml::table* section = saved["model"].as_table())
    for (const auto& [key, value] : *section)
      LLMTRAIN_CHECK(std::find(std::begin(known), std::end(known), key.str()) != std::end(known), path,
                     ": the saved configuration has model.", key.str(), ", a setting this version cannot apply");
  ModelConfig c;
  c.vocab_size = setting<std::int64_t>(saved, "model", "vocab_size", path);
  c.d_model = setting<std::int64_t>(saved, "model", "d_model", path);
  c.n_layers = setting<std::int64_t>(saved, "model", "n_layers", path);
  c.n_heads = setting<std::int64_t>(saved, "model", "n_heads", path);
  c.n_kv_heads = setting<std::int64_t>(saved, "model", "n_kv_heads", path);
  c.d_ff = setting<std::int64_t>(saved, "model", "d_ff", path);
  c.rope_theta = setting<double>(saved, "model", "rope_theta", path);
  c.norm_eps = setting<double>(saved, "model", "norm_eps", path);
  c.tie_embeddings = setting<bool>(saved, "model", "tie_embeddings", path);
  c.mask_documents = setting<bool>(saved, "model", "mask_documents", path);
  c.init_std = setting<double>(saved, "model", "init_std", path);
  c.seed = setting<std::int64_t>(saved, "model", "seed", path);
  const ModelConfig defaults;
  c.max_position_embeddings =
      setting_or<std::int64_t>(saved, "model", "max_position_embeddings", defaults.max_position_embeddings);
  c.embedding_multiplier = setting_or<double>(saved, "model", "embedding_multiplier", defaults.embedding_multiplier);
  c.residual_multiplier = setting_or<double>(saved, "model", "residual_multiplier", defaults.residual_multiplier);
  c.attention_multiplier = setting_or<double>(saved, "model", "attention_multiplier", defaults.attention_multiplier);
  c.logits_scaling = setting_or<double>(saved, "model", "logits_scaling", defaults.logits_scaling);
  c.rope_type = setting_or<std::string>(saved, "model", "rope_type", defaults.rope_type);
  c.rope_factor = setting_or<double>(saved, "model", "rope_factor", defaults.rope_factor);
  c.rope_low_freq_factor = setting_or<double>(saved, "model", "rope_low_freq_factor", defaults.rope_low_freq_factor);
  c.rope_high_freq_factor = setting_or<double>(saved, "model", "rope_high_freq_factor", defaults.rope_high_freq_factor);
  c.rope_original_max_position_embeddings = setting_or<std::int64_t>(
      saved, "model", "rope_original_max_position_embeddings", defaults.rope_original_max_position_embeddings);
  std::int64_t embedding_rows = 0;
  for (const auto& d : reader.datasets())
    if (d.name == "/model/embedding/tok_embedding" && !d.shape.empty()) embedding_rows = std::int64_t(d.shape[0]);
  LLMTRAIN_CHECK(embedding_rows > 0, path, ": no /model/embedding/tok_embedding");
  return c.resolved(embedding_rows, setting<std::int64_t>(saved, "data", "seq_len", path));
}

std::vector<model::ParamUnit<float>> read_parameters(Reader& reader, const ModelConfig& config) {
  auto units = model::allocate_units<float>(model::unit_layouts(config), "params");
  reader.read_units("model", units, "");
  return units;
}

}  // namespace llmtrain::ckpt
