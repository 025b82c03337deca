// `llmtrain-ckpt import` against the fixtures of tests/golden/hf/ (made once by make_hf_fixtures.py with
// transformers, which the tests never need): imported models give transformers' logits (fp32, 1e-4 relative)
// and its greedy continuations; import -> export gives back the source's tensors bit for bit (fp32 and bf16
// sources); export -> import gives back the checkpoint's parameters bit for bit; both config.json dialects
// read the same; every refusal names its field and value. Runs under mpirun on one rank.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdio>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "llmtrain/ckpt/checkpoint.hpp"
#include "llmtrain/ckpt/export.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/dist/runtime.hpp"
#include "llmtrain/job/hf_import.hpp"
#include "llmtrain/model/local_units.hpp"
#include "llmtrain/model/model.hpp"
#include "safetensors.hpp"

extern llmtrain::dist::Runtime* g_runtime;

namespace {

using namespace llmtrain;
namespace fs = std::filesystem;
using json = nlohmann::json;

const std::string kFixtures = std::string(LLMTRAIN_SOURCE_DIR) + "/tests/golden/hf/";

fs::path work_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / "llmtrain_hf_import_test" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

json read_json(const fs::path& file) {
  std::ifstream in(file);
  return json::parse(in);
}

void write_json(const fs::path& file, const json& value) { std::ofstream(file) << value.dump(2); }

job::ImportResult import_into(const std::string& hf_dir, const fs::path& out, std::int64_t seq_len = 0) {
  return job::import_hf({hf_dir, out.string(), seq_len}, g_runtime->comm());
}

// The checkpoint's parameters as whole units.
std::vector<model::ParamUnit<float>> checkpoint_params(const std::string& path, const ModelConfig& config) {
  auto units = model::allocate_units<float>(model::unit_layouts(config), "test");
  ckpt::Reader reader(path, g_runtime->comm());
  reader.read_units("model", units, "");
  return units;
}

// A model over the checkpoint's parameters.
struct Loaded {
  Loaded(const std::string& path, const ModelConfig& config) : units(config), model(config, model::Recompute::None, units) {
    const auto params = checkpoint_params(path, config);
    for (std::size_t u = 0; u < params.size(); ++u) Kokkos::deep_copy(units.params()[u].flat, params[u].flat);
  }
  // Logits [ids.size(), vocab] of one sequence.
  std::vector<float> logits(const std::vector<int>& ids) {
    Batch b;
    b.rows = 1;
    b.seq_len = std::int64_t(ids.size());
    b.tokens.assign(ids.begin(), ids.end());
    b.tokens.push_back(0);  // the last position's target, unused
    return model.logits(b);
  }
  model::LocalUnits<float> units;
  model::Model<float> model;
};

class Fixture : public ::testing::TestWithParam<std::string> {};

TEST_P(Fixture, LogitsAndGreedyTokensMatchTransformers) {
  const std::string dir = kFixtures + GetParam();
  const fs::path out = work_dir(GetParam());
  const job::ImportResult r = import_into(dir, out);
  EXPECT_EQ(r.checkpoint, (out / "step_00000000.h5").string());
  ASSERT_TRUE(fs::exists(out / "tokenizer" / "tokenizer.json"));
  const json reference = read_json(fs::path(dir) / "reference.json");
  EXPECT_EQ(r.source.architecture, reference["architecture"].get<std::string>());
  {  // a fresh optimizer at step 0, no loader state, the source's context, tokens and tokenizer
    ckpt::Reader reader(r.checkpoint, g_runtime->comm());
    EXPECT_EQ(reader.metadata().step, 0);
    EXPECT_EQ(reader.optimizer_step(), 0);
    EXPECT_TRUE(reader.loader_states().empty());
    const std::string& saved = reader.metadata().config;
    EXPECT_NE(saved.find("max_position_embeddings = 64"), std::string::npos) << saved;
    EXPECT_NE(saved.find("bos_token = \"<|begin_of_text|>\""), std::string::npos) << saved;
    EXPECT_NE(saved.find("eos_token = \"<|end_of_text|>\""), std::string::npos) << saved;
    EXPECT_NE(saved.find(r.tokenizer_dir), std::string::npos) << saved;
    auto moments = model::allocate_units<float>(model::unit_layouts(r.source.model), "m");
    reader.read_units("optim", moments, "m");
    for (const auto& u : moments)
      for (std::size_t i = 0; i < u.flat.size(); ++i) ASSERT_EQ(u.flat(i), 0.0f) << u.layout.name;
  }
  Loaded loaded(r.checkpoint, r.source.model);
  const std::int64_t vocab = r.source.model.vocab_size;
  std::size_t compared = 0, generated = 0;
  for (const auto& c : reference["cases"]) {
    const auto ids = c["ids"].get<std::vector<int>>();
    const std::vector<float> ours = loaded.logits(ids);
    double worst = 0, scale = 0;
    for (std::size_t t = 0; t < ids.size(); ++t)
      for (std::int64_t v = 0; v < vocab; ++v) {
        const double theirs = c["logits"][t][std::size_t(v)].get<double>();
        worst = std::max(worst, std::abs(double(ours[t * std::size_t(vocab) + std::size_t(v)]) - theirs));
        scale = std::max(scale, std::abs(theirs));
      }
    std::printf("%s \"%s\": largest logit difference %.3g, %.3g of the largest logit\n", GetParam().c_str(),
                c["prompt"].get<std::string>().c_str(), worst, worst / scale);
    EXPECT_LE(worst, 1e-4 * scale) << GetParam() << " \"" << c["prompt"].get<std::string>() << "\": largest logit "
                                   << "difference " << worst << " against logits up to " << scale;
    // Greedy continuation by full-sequence logits, token by token. A near tie (top two within 1e-5 of the
    // logits' scale, where fp32 summation order decides) ends the comparison there.
    std::vector<int> seq = ids;
    const auto expected = c["greedy"].get<std::vector<int>>();
    generated += expected.size();
    for (std::size_t step = 0; step < expected.size(); ++step) {
      const std::vector<float> all = loaded.logits(seq);
      const float* last = all.data() + (seq.size() - 1) * std::size_t(vocab);
      std::vector<float> row(last, last + vocab);
      const int best = int(std::max_element(row.begin(), row.end()) - row.begin());
      std::vector<float> sorted = row;
      std::partial_sort(sorted.begin(), sorted.begin() + 2, sorted.end(), std::greater<float>());
      if (sorted[0] - sorted[1] < 1e-5 * scale) break;
      ASSERT_EQ(best, expected[step]) << GetParam() << " \"" << c["prompt"].get<std::string>() << "\" step " << step;
      seq.push_back(best);
      ++compared;
    }
  }
  EXPECT_GE(compared, generated * 3 / 4) << GetParam() << ": too many near ties for the greedy check to mean much";
}

INSTANTIATE_TEST_SUITE_P(HfImport, Fixture,
                         ::testing::Values("llama_gqa_untied", "llama_bf16_sharded", "granite_tied", "llama3_rope"));

// The export of an import holds the source's tensors, bit for bit, under the same names and dtype.
void expect_same_tensors(const std::string& source_dir, const std::string& export_dir) {
  const auto source = ckpt::read_safetensors_dir(source_dir);
  const auto exported = ckpt::read_safetensors_dir(export_dir);
  ASSERT_EQ(source.size(), exported.size()) << source_dir;
  for (const auto& [name, entry] : source) {
    const auto it = exported.find(name);
    ASSERT_NE(it, exported.end()) << name;
    EXPECT_EQ(it->second.dtype, entry.dtype) << name;
    EXPECT_EQ(it->second.shape, entry.shape) << name;
    EXPECT_TRUE(ckpt::read_safetensors_bytes(it->second) == ckpt::read_safetensors_bytes(entry)) << name;
  }
}

ckpt::ExportResult export_to(const std::string& checkpoint, const fs::path& out, bool bf16) {
  ckpt::Reader reader(checkpoint, g_runtime->comm());
  ckpt::ExportOptions options;
  options.output_dir = out.string();
  options.bf16 = bf16;
  return ckpt::export_safetensors(reader, options);
}

TEST(HfImportRoundTrip, ExportOfImportIsTheSourceBitwise) {
  for (const auto& [name, bf16] : {std::pair{"llama_gqa_untied", false}, {"llama_bf16_sharded", true},
                                   {"granite_tied", false}, {"llama3_rope", false}}) {
    const fs::path out = work_dir(std::string("roundtrip_") + name);
    const job::ImportResult r = import_into(kFixtures + name, out / "ckpt");
    export_to(r.checkpoint, out / "hf", bf16);
    expect_same_tensors(kFixtures + name, (out / "hf").string());
    // config.json states what the model computes: the architecture, Granite's multipliers, the rotary scaling.
    const json source = read_json(kFixtures + name + "/config.json"), exported = read_json(out / "hf" / "config.json");
    EXPECT_EQ(exported["architectures"], source["architectures"]) << name;
    EXPECT_EQ(exported["max_position_embeddings"], source["max_position_embeddings"]) << name;
    EXPECT_EQ(exported["tie_word_embeddings"], source["tie_word_embeddings"]) << name;
    for (const char* key : {"embedding_multiplier", "residual_multiplier", "attention_multiplier", "logits_scaling"})
      if (source.contains(key)) {
        EXPECT_EQ(exported[key].get<double>(), source[key].get<double>()) << name << " " << key;
      }
    if (source["rope_parameters"]["rope_type"] == "llama3") {
      for (const char* key : {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"})
        EXPECT_EQ(exported["rope_scaling"][key].get<double>(), source["rope_parameters"][key].get<double>()) << key;
    }
    EXPECT_EQ(exported["rope_theta"].get<double>(), source["rope_parameters"]["rope_theta"].get<double>()) << name;
  }
}

TEST(HfImportRoundTrip, ImportOfExportIsTheCheckpointBitwise) {
  const fs::path out = work_dir("export_import");
  const job::ImportResult first = import_into(kFixtures + "granite_tied", out / "a");
  export_to(first.checkpoint, out / "hf", false);
  fs::copy(out / "a" / "tokenizer" / "tokenizer.json", out / "hf" / "tokenizer.json");
  const job::ImportResult second = import_into((out / "hf").string(), out / "b");
  const auto a = checkpoint_params(first.checkpoint, first.source.model);
  const auto b = checkpoint_params(second.checkpoint, second.source.model);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t u = 0; u < a.size(); ++u) {
    ASSERT_EQ(a[u].flat.size(), b[u].flat.size());
    EXPECT_EQ(std::memcmp(a[u].flat.data(), b[u].flat.data(), a[u].flat.size() * sizeof(float)), 0) << a[u].layout.name;
  }
  const ModelConfig &x = first.source.model, &y = second.source.model;
  EXPECT_EQ(x.embedding_multiplier, y.embedding_multiplier);
  EXPECT_EQ(x.residual_multiplier, y.residual_multiplier);
  EXPECT_EQ(x.attention_multiplier, y.attention_multiplier);
  EXPECT_EQ(x.logits_scaling, y.logits_scaling);
}

// transformers 4 wrote rope_theta and rope_scaling beside each other and torch_dtype; 5 writes rope_parameters
// and dtype. Both read the same.
TEST(HfImportConfig, TransformersFourDialect) {
  const fs::path dir = work_dir("dialect4");
  fs::copy(kFixtures + "llama3_rope", dir, fs::copy_options::recursive);
  json c = read_json(dir / "config.json");
  json rope = c["rope_parameters"];
  c.erase("rope_parameters");
  c["rope_theta"] = rope["rope_theta"];
  rope.erase("rope_theta");
  c["rope_scaling"] = rope;
  c["torch_dtype"] = c["dtype"];
  c.erase("dtype");
  write_json(dir / "config.json", c);
  const ckpt::HfModel four = ckpt::read_hf_config(dir.string());
  const ckpt::HfModel five = ckpt::read_hf_config(kFixtures + "llama3_rope");
  EXPECT_EQ(four.model.rope_type, "llama3");
  EXPECT_EQ(four.model.rope_theta, five.model.rope_theta);
  EXPECT_EQ(four.model.rope_factor, five.model.rope_factor);
  EXPECT_EQ(four.model.rope_low_freq_factor, five.model.rope_low_freq_factor);
  EXPECT_EQ(four.model.rope_high_freq_factor, five.model.rope_high_freq_factor);
  EXPECT_EQ(four.model.rope_original_max_position_embeddings, five.model.rope_original_max_position_embeddings);
  EXPECT_EQ(four.dtype, "float32");
  EXPECT_EQ(five.dtype, "float32");
  // The oldest form: rope_scaling's "type" key.
  c["rope_scaling"]["type"] = c["rope_scaling"]["rope_type"];
  c["rope_scaling"].erase("rope_type");
  write_json(dir / "config.json", c);
  EXPECT_EQ(ckpt::read_hf_config(dir.string()).model.rope_type, "llama3");
}

// A fixture whose config.json `edit` changed must be refused with a message holding every one of `expect`.
void expect_refused(const std::string& name, void (*edit)(json&), std::vector<std::string> expect,
                    std::int64_t seq_len = 0) {
  const fs::path dir = work_dir("refused_" + name);
  fs::copy(kFixtures + "llama_gqa_untied", dir / "hf", fs::copy_options::recursive);
  json c = read_json(dir / "hf" / "config.json");
  edit(c);
  write_json(dir / "hf" / "config.json", c);
  try {
    import_into((dir / "hf").string(), dir / "out", seq_len);
    ADD_FAILURE() << name << ": imported";
  } catch (const Error& e) {
    for (const auto& part : expect) EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir / "out" / "step_00000000.h5")) << name;
}

TEST(HfImportRefusals, EachNamesItsFieldAndValue) {
  expect_refused("attention_bias", [](json& c) { c["attention_bias"] = true; }, {"config.json: attention_bias: true"});
  expect_refused("mlp_bias", [](json& c) { c["mlp_bias"] = true; }, {"config.json: mlp_bias: true"});
  expect_refused("sliding_window", [](json& c) {
    c["architectures"] = {"MistralForCausalLM"}, c["model_type"] = "mistral", c["sliding_window"] = 32;
  }, {"config.json: sliding_window: 32 is below the sequence length 64"});
  expect_refused("yarn", [](json& c) { c["rope_parameters"] = {{"rope_type", "yarn"}, {"factor", 4.0}, {"rope_theta", 1e4}}; },
                 {"config.json: rope_parameters.rope_type: \"yarn\" is not supported"});
  expect_refused("dynamic", [](json& c) {
    c.erase("rope_parameters"), c["rope_scaling"] = {{"type", "dynamic"}, {"factor", 2.0}};
  }, {"config.json: rope_scaling.rope_type: \"dynamic\" is not supported"});
  expect_refused("head_dim", [](json& c) { c["head_dim"] = 16; }, {"config.json: head_dim: 16 is not hidden_size / num_attention_heads = 8"});
  expect_refused("vocab", [](json& c) { c["vocab_size"] = 200; }, {"config.json: vocab_size: 200 is smaller than the tokenizer's vocabulary (290 tokens)"});
  expect_refused("architecture", [](json& c) { c["architectures"] = {"GPT2LMHeadModel"}; },
                 {"config.json: architectures: \"GPT2LMHeadModel\" is not supported"});
  expect_refused("act", [](json& c) { c["hidden_act"] = "gelu"; }, {"config.json: hidden_act: \"gelu\""});
  // A shape config.json disagrees with: the tensor is named with both shapes.
  expect_refused("shape", [](json& c) { c["intermediate_size"] = 48; },
                 {"tensor model.layers.0.mlp.down_proj.weight has shape [32,64], config.json gives [32,48]"});
}

TEST(HfImportRefusals, SlidingWindowAtLeastTheRunsSequenceIsKept) {
  const fs::path dir = work_dir("window_ok");
  fs::copy(kFixtures + "llama_gqa_untied", dir / "hf", fs::copy_options::recursive);
  json c = read_json(dir / "hf" / "config.json");
  c["architectures"] = {"MistralForCausalLM"}, c["sliding_window"] = 32;
  write_json(dir / "hf" / "config.json", c);
  EXPECT_EQ(import_into((dir / "hf").string(), dir / "out", 32).source.architecture, "MistralForCausalLM");
}

TEST(HfImportRefusals, MissingFilesAreNamed) {
  const fs::path dir = work_dir("missing");
  fs::copy(kFixtures + "llama_gqa_untied", dir / "hf", fs::copy_options::recursive);
  fs::remove(dir / "hf" / "model.safetensors");
  try {
    import_into((dir / "hf").string(), dir / "out");
    ADD_FAILURE() << "imported without tensors";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("neither model.safetensors nor model.safetensors.index.json"), std::string::npos)
        << e.what();
  }
  fs::remove(dir / "hf" / "tokenizer.json");
  try {
    import_into((dir / "hf").string(), dir / "out");
    ADD_FAILURE() << "imported without a tokenizer";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no tokenizer"), std::string::npos) << e.what();
  }
}

// F16 tensors (no fixture has one) widen exactly: normal, subnormal, signed zero, infinity, the largest value;
// a dtype the import does not read is named.
TEST(HfImportSafetensors, HalfPrecisionWidensExactly) {
  const fs::path file = work_dir("f16") / "t.safetensors";
  const std::vector<std::uint16_t> bits = {0x3c00, 0xc000, 0x0001, 0x8000, 0x7c00, 0x7bff, 0x3555};
  const std::string header = R"({"h":{"dtype":"F16","shape":[7],"data_offsets":[0,14]},)"
                             R"("i":{"dtype":"I32","shape":[1],"data_offsets":[14,18]}})";
  {
    std::ofstream out(file, std::ios::binary);
    const std::uint64_t length = header.size();
    out.write(reinterpret_cast<const char*>(&length), 8);
    out << header;
    out.write(reinterpret_cast<const char*>(bits.data()), 14);
    out.write("\0\0\0\0", 4);
  }
  const auto entries = ckpt::read_safetensors_header(file.string());
  const std::vector<float> values = ckpt::read_safetensors_floats(entries.at("h"), "h");
  const std::vector<float> expected = {1.0f, -2.0f, std::ldexp(1.0f, -24), -0.0f, INFINITY, 65504.0f,
                                       0.25f * (1.0f + float(0x155) / 1024.0f)};
  ASSERT_EQ(values.size(), expected.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(values[i], expected[i]) << i;
    EXPECT_EQ(std::signbit(values[i]), std::signbit(expected[i])) << i;
  }
  try {
    ckpt::read_safetensors_floats(entries.at("i"), "i");
    ADD_FAILURE() << "read an I32 tensor as floats";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tensor i is I32; the import reads F32, BF16 and F16"), std::string::npos) << e.what();
  }
  // A byte range beyond the file is named.
  std::filesystem::resize_file(file, 8 + header.size() + 10);
  EXPECT_THROW(ckpt::read_safetensors_header(file.string()), Error);
}

}  // namespace
