// Hugging Face model directory -> ModelConfig and parameter units (see hf_import.hpp).
#include "llmtrain/ckpt/hf_import.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "hf_names.hpp"
#include "llmtrain/core/error.hpp"
#include "safetensors.hpp"

namespace llmtrain::ckpt {
namespace {

using json = nlohmann::json;

// Reads config.json's fields with the file named in every error.
struct ConfigFile {
  std::string path;
  json value;

  bool has(const char* key) const { return value.contains(key) && !value[key].is_null(); }
  template <typename T>
  T get(const char* key) const {
    LLMTRAIN_CHECK(has(key), path, ": ", key, " is missing");
    try {
      return value[key].get<T>();
    } catch (const json::exception&) {
      LLMTRAIN_FAIL(path, ": ", key, ": unexpected value ", value[key].dump());
    }
  }
  template <typename T>
  T get(const char* key, T fallback) const { return has(key) ? get<T>(key) : fallback; }
  // A token id, or a list of them (Llama 3's instruct models list several end-of-turn ids): the first.
  std::optional<std::int64_t> token_id(const char* key) const {
    if (!has(key)) return std::nullopt;
    const json& v = value[key];
    if (v.is_array() && !v.empty() && v[0].is_number_integer()) return v[0].get<std::int64_t>();
    LLMTRAIN_CHECK(v.is_number_integer(), path, ": ", key, ": expected a token id, got ", v.dump());
    return v.get<std::int64_t>();
  }
};

// The rotary settings of either dialect: transformers 5's rope_parameters (with rope_theta inside it), or
// transformers 4's rope_theta beside rope_scaling (whose type key was "type" before "rope_type").
void read_rope(const ConfigFile& c, ModelConfig& m) {
  json scaling;
  const char* field = "rope_scaling";
  if (c.has("rope_parameters")) {
    field = "rope_parameters";
    scaling = c.value["rope_parameters"];
    LLMTRAIN_CHECK(scaling.is_object(), c.path, ": rope_parameters: expected an object, got ", scaling.dump());
    m.rope_theta = scaling.value("rope_theta", c.get<double>("rope_theta", 10000.0));
  } else {
    m.rope_theta = c.get<double>("rope_theta", 10000.0);
    if (c.has("rope_scaling")) scaling = c.value["rope_scaling"];
  }
  if (scaling.is_null()) return;
  LLMTRAIN_CHECK(scaling.is_object(), c.path, ": ", field, ": expected an object, got ", scaling.dump());
  const std::string type = scaling.contains("rope_type") ? scaling["rope_type"].get<std::string>()
                                                         : scaling.value("type", std::string("default"));
  if (type == "default") return;
  LLMTRAIN_CHECK(type == "llama3", c.path, ": ", field, ".rope_type: \"", type,
                 "\" is not supported (only \"default\" and \"llama3\")");
  m.rope_type = "llama3";
  const auto number = [&](const char* key) {
    LLMTRAIN_CHECK(scaling.contains(key) && scaling[key].is_number(), c.path, ": ", field, ".", key,
                   " is missing (rope_type \"llama3\" needs it)");
    return scaling[key].get<double>();
  };
  m.rope_factor = number("factor");
  m.rope_low_freq_factor = number("low_freq_factor");
  m.rope_high_freq_factor = number("high_freq_factor");
  m.rope_original_max_position_embeddings = std::int64_t(number("original_max_position_embeddings"));
}

}  // namespace

HfModel read_hf_config(const std::string& dir, std::int64_t seq_len) {
  ConfigFile c{(std::filesystem::path(dir) / "config.json").string(), {}};
  {
    std::ifstream in(c.path);
    LLMTRAIN_CHECK(in, c.path, ": cannot open (a Hugging Face model directory holds config.json)");
    try {
      c.value = json::parse(in);
    } catch (const json::exception& e) {
      LLMTRAIN_FAIL(c.path, ": not JSON: ", e.what());
    }
    LLMTRAIN_CHECK(c.value.is_object(), c.path, ": not a JSON object");
  }
  HfModel out;
  out.dir = dir;
  const auto architectures = c.get<std::vector<std::string>>("architectures");
  LLMTRAIN_CHECK(architectures.size() == 1, c.path, ": architectures: expected one, got ", c.value["architectures"].dump());
  out.architecture = architectures[0];
  const bool granite = out.architecture == "GraniteForCausalLM";
  LLMTRAIN_CHECK(granite || out.architecture == "LlamaForCausalLM" || out.architecture == "MistralForCausalLM", c.path,
                 ": architectures: \"", out.architecture,
                 "\" is not supported (LlamaForCausalLM, MistralForCausalLM, GraniteForCausalLM)");
  ModelConfig& m = out.model;
  m.vocab_size = c.get<std::int64_t>("vocab_size");
  m.d_model = c.get<std::int64_t>("hidden_size");
  m.n_layers = c.get<std::int64_t>("num_hidden_layers");
  m.n_heads = c.get<std::int64_t>("num_attention_heads");
  m.n_kv_heads = c.get<std::int64_t>("num_key_value_heads", m.n_heads);
  m.d_ff = c.get<std::int64_t>("intermediate_size");
  m.norm_eps = c.get<double>("rms_norm_eps", 1e-6);
  m.tie_embeddings = c.get<bool>("tie_word_embeddings", false);
  out.max_position_embeddings = c.get<std::int64_t>("max_position_embeddings");
  m.max_seq_len = out.max_position_embeddings;
  out.bos_id = c.token_id("bos_token_id");
  out.eos_id = c.token_id("eos_token_id");
  out.dtype = c.get<std::string>("dtype", c.get<std::string>("torch_dtype", ""));
  LLMTRAIN_CHECK(m.n_heads > 0 && m.d_model % m.n_heads == 0, c.path, ": num_attention_heads: ", m.n_heads,
                 " does not divide hidden_size ", m.d_model);
  if (c.has("head_dim"))
    LLMTRAIN_CHECK(c.get<std::int64_t>("head_dim") == m.d_model / m.n_heads, c.path, ": head_dim: ",
                   c.get<std::int64_t>("head_dim"), " is not hidden_size / num_attention_heads = ", m.d_model / m.n_heads,
                   " (the only head size the model has)");
  for (const char* bias : {"attention_bias", "mlp_bias"})
    LLMTRAIN_CHECK(!c.get<bool>(bias, false), c.path, ": ", bias, ": true (the model has no biases)");
  const std::string act = c.get<std::string>("hidden_act", "silu");
  LLMTRAIN_CHECK(act == "silu", c.path, ": hidden_act: \"", act, "\" (the MLP is SwiGLU: silu)");
  const std::int64_t window_needed = seq_len > 0 ? seq_len : out.max_position_embeddings;
  if (c.has("sliding_window"))
    LLMTRAIN_CHECK(c.get<std::int64_t>("sliding_window") >= window_needed, c.path, ": sliding_window: ",
                   c.get<std::int64_t>("sliding_window"), " is below the sequence length ", window_needed,
                   " (attention is full-causal; import with --seq-len at most the window)");
  read_rope(c, m);
  if (granite) {
    m.embedding_multiplier = c.get<double>("embedding_multiplier", 1.0);
    m.residual_multiplier = c.get<double>("residual_multiplier", 1.0);
    m.attention_multiplier = c.get<double>("attention_multiplier", 1.0);
    m.logits_scaling = c.get<double>("logits_scaling", 1.0);
  }
  try {
    m.validate();
  } catch (const Error& e) {
    LLMTRAIN_FAIL(c.path, ": ", e.what());
  }
  return out;
}

std::vector<model::ParamUnit<float>> read_hf_tensors(const HfModel& source) {
  const std::map<std::string, SafetensorsEntry> entries = read_safetensors_dir(source.dir);
  std::vector<model::ParamUnit<float>> units = model::allocate_units<float>(model::unit_layouts(source.model), "import");
  std::set<std::string> filled;
  for (const auto& [name, entry] : entries) {
    if (name == "lm_head.weight" && source.model.tie_embeddings) continue;  // transformers may save the tied copy
    const std::string dataset = dataset_of_hf_tensor(name);
    LLMTRAIN_CHECK(!dataset.empty(), entry.file, ": tensor ", name, " has no place in the model (",
                   source.architecture, " without biases)");
    const auto slash = dataset.rfind('/');
    const std::string unit_name = dataset.substr(7, slash - 7), tensor_name = dataset.substr(slash + 1);
    model::ParamUnit<float>* unit = nullptr;
    for (auto& u : units)
      if (u.layout.name == unit_name) unit = &u;
    LLMTRAIN_CHECK(unit != nullptr, entry.file, ": tensor ", name, " does not fit a model of ", source.model.n_layers,
                   " layers", source.model.tie_embeddings ? " with tied embeddings" : "");
    const model::TensorSlice& slice = unit->layout.tensor(tensor_name);
    const std::vector<std::uint64_t> expected(slice.shape.begin(), slice.shape.end());
    LLMTRAIN_CHECK(entry.shape == expected, entry.file, ": tensor ", name, " has shape ", json(entry.shape).dump(),
                   ", config.json gives ", json(expected).dump());
    const std::vector<float> values = read_safetensors_floats(entry, name);
    std::memcpy(unit->flat.data() + slice.offset, values.data(), values.size() * sizeof(float));
    filled.insert(dataset);
  }
  for (const auto& u : units)
    for (const auto& t : u.layout.tensors) {
      const std::string dataset = "/model/" + u.layout.name + "/" + t.name;
      LLMTRAIN_CHECK(filled.count(dataset), source.dir, ": tensor ", hf_tensor_name(dataset), " is missing");
    }
  return units;
}

}  // namespace llmtrain::ckpt
