// Checkpoint -> safetensors + what transformers reads beside them (see export.hpp).
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "llmtrain/ckpt/export.hpp"
#include "llmtrain/ckpt/saved_model.hpp"
#include "llmtrain/core/bf16.hpp"
#include "llmtrain/core/error.hpp"
#include "hf_names.hpp"

namespace llmtrain::ckpt {
namespace {

using Tensors = std::map<std::string, std::pair<std::vector<std::uint64_t>, std::vector<float>>>;

// Tensor names in file order, split into shards of at most max_bytes (a larger tensor alone), as
// save_pretrained's max_shard_size does.
std::vector<std::vector<std::string>> shard(const Tensors& tensors, std::size_t element, std::uint64_t max_bytes) {
  std::vector<std::vector<std::string>> shards(1);
  std::uint64_t in_shard = 0;
  for (const auto& [name, tensor] : tensors) {
    const std::uint64_t bytes = tensor.second.size() * element;
    if (!shards.back().empty() && in_shard + bytes > max_bytes) shards.emplace_back(), in_shard = 0;
    shards.back().push_back(name);
    in_shard += bytes;
  }
  return shards;
}

std::string shard_name(std::size_t i, std::size_t count) {
  char name[64];
  std::snprintf(name, sizeof name, "model-%05zu-of-%05zu.safetensors", i + 1, count);
  return name;
}

// One safetensors file: an 8-byte little-endian header length, the JSON header (padded so that the data
// starts 8-byte aligned), then the tensors' bytes in header order.
bool write_safetensors(const std::string& file, const Tensors& tensors, const std::vector<std::string>& names,
                       bool bf16, const nlohmann::ordered_json& metadata) {
  nlohmann::ordered_json header;
  std::uint64_t offset = 0;
  for (const auto& name : names) {
    const auto& [shape, values] = tensors.at(name);
    const std::uint64_t bytes = values.size() * (bf16 ? 2 : 4);
    header[name] = {{"dtype", bf16 ? "BF16" : "F32"}, {"shape", shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  header["__metadata__"] = metadata;
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  const std::uint64_t length = text.size();
  out.write(reinterpret_cast<const char*>(&length), 8);  // little-endian hosts
  out << text;
  for (const auto& name : names) {
    const std::vector<float>& values = tensors.at(name).second;
    if (bf16) {
      std::vector<std::uint16_t> half(values.size());
      for (std::size_t i = 0; i < half.size(); ++i) half[i] = bf16_from_float(values[i]);
      out.write(reinterpret_cast<const char*>(half.data()), std::streamsize(half.size() * 2));
    } else {
      out.write(reinterpret_cast<const char*>(values.data()), std::streamsize(values.size() * 4));
    }
  }
  return out.good();
}

bool write_json(const std::string& file, const nlohmann::ordered_json& value) {
  std::ofstream out(file, std::ios::trunc);
  out << value.dump(2) << '\n';
  return out.good();
}

}  // namespace

ExportResult export_safetensors(Reader& reader, const ExportOptions& options) {
  const std::string& path = reader.path();
  // The model as the run built it (every setting this version applies, or an error naming one it cannot).
  const ModelConfig m = saved_model_config(reader);
  // Tensors in name order (safetensors readers do not care; a fixed order makes the file reproducible).
  Tensors tensors;
  for (const auto& d : reader.datasets()) {
    const std::string name = hf_tensor_name(d.name);
    if (name.empty()) continue;
    auto& [shape, values] = tensors[name];
    values = reader.read_tensor(d.name, shape);
  }
  LLMTRAIN_CHECK(tensors.count("model.embed_tokens.weight"), path, ": no /model/embedding/tok_embedding");
  int rank = 0;
  MPI_Comm_rank(reader.comm(), &rank);

  const auto& embed = tensors["model.embed_tokens.weight"].first;
  std::int64_t layers = 0;
  while (tensors.count("model.layers." + std::to_string(layers) + ".input_layernorm.weight")) ++layers;
  nlohmann::ordered_json hf_config = {
      {"architectures", {"LlamaForCausalLM"}},
      {"model_type", "llama"},
      {"vocab_size", embed[0]},
      {"hidden_size", embed[1]},
      {"intermediate_size", tensors["model.layers.0.mlp.gate_proj.weight"].first.at(0)},
      {"num_hidden_layers", layers},
      {"num_attention_heads", m.n_heads},
      {"num_key_value_heads", m.n_kv_heads},
      {"hidden_act", "silu"},
      {"rms_norm_eps", m.norm_eps},
      {"rope_theta", m.rope_theta},
      {"max_position_embeddings", m.max_position_embeddings > 0 ? m.max_position_embeddings : m.max_seq_len},
      {"tie_word_embeddings", !tensors.count("lm_head.weight")},
      {"attention_bias", false},
      {"mlp_bias", false},
      {"torch_dtype", options.bf16 ? "bfloat16" : "float32"}};
  // Settings beyond Llama's: Granite's four scalings make the export a GraniteForCausalLM, and Llama 3's rotary
  // remapping is written as transformers 4 wrote it (rope_scaling), which transformers 5 reads too.
  if (m.embedding_multiplier != 1.0 || m.residual_multiplier != 1.0 || m.attention_multiplier != 0.0 ||
      m.logits_scaling != 1.0) {
    hf_config["architectures"] = {"GraniteForCausalLM"};
    hf_config["model_type"] = "granite";
    hf_config["embedding_multiplier"] = m.embedding_multiplier;
    hf_config["residual_multiplier"] = m.residual_multiplier;
    hf_config["attention_multiplier"] =
        m.attention_multiplier > 0 ? m.attention_multiplier : 1.0 / std::sqrt(double(m.head_dim()));
    hf_config["logits_scaling"] = m.logits_scaling;
  }
  if (m.rope_type == "llama3")
    hf_config["rope_scaling"] = {{"rope_type", "llama3"},
                                 {"factor", m.rope_factor},
                                 {"low_freq_factor", m.rope_low_freq_factor},
                                 {"high_freq_factor", m.rope_high_freq_factor},
                                 {"original_max_position_embeddings", m.rope_original_max_position_embeddings}};

  const std::size_t element = options.bf16 ? 2 : 4;
  std::vector<std::vector<std::string>> shards = shard(tensors, element, options.max_shard_bytes);
  ExportResult result;
  for (const auto& [name, tensor] : tensors) result.tensor_bytes += tensor.second.size() * element;
  for (std::size_t i = 0; i < shards.size(); ++i)
    result.tensor_files.push_back(shards.size() == 1 ? "model.safetensors" : shard_name(i, shards.size()));

  std::string failure;
  if (rank == 0) {
    std::error_code ec;
    std::filesystem::create_directories(options.output_dir, ec);
    const auto metadata = nlohmann::ordered_json{{"format", "pt"}, {"source", path},
                                                 {"step", std::to_string(reader.metadata().step)}};
    bool ok = !ec;
    nlohmann::ordered_json weight_map;
    for (std::size_t i = 0; i < shards.size(); ++i) {
      const std::string& file = result.tensor_files[i];
      ok = write_safetensors(options.output_dir + "/" + file, tensors, shards[i], options.bf16, metadata) && ok;
      for (const auto& name : shards[i]) weight_map[name] = file;
    }
    if (shards.size() > 1)
      ok = write_json(options.output_dir + "/model.safetensors.index.json",
                      {{"metadata", {{"total_size", result.tensor_bytes}}}, {"weight_map", weight_map}}) && ok;
    const auto id = [](const std::optional<std::int64_t>& v) { return v ? nlohmann::ordered_json(*v) : nullptr; };
    hf_config["bos_token_id"] = id(options.bos_id);
    hf_config["eos_token_id"] = id(options.eos_id);
    ok = write_json(options.output_dir + "/config.json", hf_config) && ok;
    ok = write_json(options.output_dir + "/generation_config.json",
                    {{"_from_model_config", true}, {"bos_token_id", id(options.bos_id)},
                     {"eos_token_id", id(options.eos_id)}}) && ok;
    if (!options.tokenizer_json.empty()) {
      std::ofstream tokenizer(options.output_dir + "/tokenizer.json", std::ios::binary | std::ios::trunc);
      tokenizer << options.tokenizer_json;
      ok = tokenizer.good() && ok;
      const auto token = [](const std::string& t) { return t.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(t); };
      ok = write_json(options.output_dir + "/tokenizer_config.json",
                      {{"tokenizer_class", "PreTrainedTokenizerFast"},
                       {"bos_token", token(options.bos_token)},
                       {"eos_token", token(options.eos_token)},
                       {"model_max_length", hf_config["max_position_embeddings"]},
                       {"clean_up_tokenization_spaces", false}}) && ok;
    }
    if (!ok) failure = options.output_dir + ": writing the export failed";
  }
  int failed = failure.empty() ? 0 : 1;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, reader.comm());
  LLMTRAIN_CHECK(!failed, failure.empty() ? options.output_dir + ": writing the export failed on rank 0" : failure);
  return result;
}

}  // namespace llmtrain::ckpt
