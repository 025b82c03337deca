// Configuration parsing: valid files, defaults, path resolution, round trips through the printer, the
// generated reference, and every class of bad input, each with a file:line:key message.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "config_fixture.hpp"
#include "llmtrain/config/config.hpp"
#include "llmtrain/core/error.hpp"

namespace fs = std::filesystem;
using llmtrain::Config;

namespace {

using llmtrain_test::ConfigTest;

TEST_F(ConfigTest, MinimalFileGetsDefaultsAndResolvedPaths) {
  const Config c = load(minimal());
  EXPECT_EQ(c.model.d_model, 64);
  EXPECT_EQ(c.model.n_layers, 12);  // default
  EXPECT_EQ(c.model.n_kv_heads, 0);
  EXPECT_DOUBLE_EQ(c.train.lr, 3e-4);
  EXPECT_EQ(c.train.schedule, "cosine");
  EXPECT_EQ(c.data.seq_len, 1024);
  EXPECT_EQ(c.tokenizer.path, (dir_ / "tok.json").string());
  ASSERT_EQ(c.data.datasets.size(), 1u);
  EXPECT_EQ(c.data.datasets[0].path, (dir_ / "corpus").string());
  EXPECT_EQ(c.data.datasets[0].field, "text");
  EXPECT_DOUBLE_EQ(c.data.datasets[0].weight, 0.7);
  EXPECT_EQ(c.train.run_dir, "runs/default");  // a default, relative to the working directory
  EXPECT_EQ(c.source_lines.at("model.d_model"), 2);
}

TEST_F(ConfigTest, IntegerIsAcceptedWhereANumberIsExpected) {
  EXPECT_DOUBLE_EQ(load(minimal("", "lr = 1\nmin_lr = 0\n")).train.lr, 1.0);
}

TEST_F(ConfigTest, GlobDatasetPathIsAccepted) {
  const Config c = load(minimal() + "\n[[data.datasets]]\nname = \"code\"\npath = \"corpus/*.jsonl\"\n");
  ASSERT_EQ(c.data.datasets.size(), 2u);
  EXPECT_DOUBLE_EQ(c.data.datasets[1].weight, 1.0);
}

TEST_F(ConfigTest, PrintedConfigurationLoadsBackIdentically) {
  const Config original = load(minimal("n_kv_heads = 2\ntie_embeddings = true\n", "lr = 0.001\n"));
  const std::string printed = llmtrain::to_toml(original);
  EXPECT_NE(printed.find("n_layers = 12  # default"), std::string::npos);
  const Config again = load(printed);
  EXPECT_EQ(llmtrain::to_toml(again).find("# default"), std::string::npos);  // now every key is set
  EXPECT_EQ(again.model.n_kv_heads, 2);
  EXPECT_TRUE(again.model.tie_embeddings);
  EXPECT_DOUBLE_EQ(again.train.lr, 0.001);
  EXPECT_DOUBLE_EQ(again.train.beta2, original.train.beta2);
  EXPECT_EQ(again.data.datasets[0].path, original.data.datasets[0].path);
  // A default relative path means the working directory, wherever the printed file is loaded from.
  EXPECT_EQ(original.train.run_dir, "runs/default");
  EXPECT_EQ(again.train.run_dir, (std::filesystem::current_path() / "runs/default").string());
}

TEST_F(ConfigTest, EveryStringPrintsAsTomlThatLoadsBackTheSame) {
  // Each control character (NUL included), quote, backslash and non-ASCII text, written as TOML escapes.
  std::string escaped, expected;
  for (int c = 0; c < 0x20; ++c) {
    char escape[8];
    std::snprintf(escape, sizeof escape, "\\u%04x", c);
    escaped += escape;
    expected += static_cast<char>(c);
  }
  escaped += "\\u007f \\\" \\\\ ' \u00e9\u65e5\U0001F642 #";
  expected += "\x7f \" \\ ' \xc3\xa9\xe6\x97\xa5\xf0\x9f\x99\x82 #";
  const Config original =
      load(minimal("", "", "\n[[data.eval_datasets]]\nname = \"" + escaped + "\"\npath = \"corpus\"\n"));
  ASSERT_EQ(original.data.eval_datasets.at(0).name, expected);
  const std::string printed = llmtrain::to_toml(original);
  for (const char c : printed)  // TOML allows none raw in a string; line ends only between lines
    EXPECT_TRUE(c == '\n' || (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f)) << int(c);
  const Config again = load(printed);
  EXPECT_EQ(again.data.eval_datasets.at(0).name, expected);
  EXPECT_NE(printed.find("name = \"\\u0000\\u0001"), std::string::npos) << printed;
  EXPECT_NE(printed.find("\\b\\t\\n\\u000B\\f\\r"), std::string::npos) << printed;
}

TEST_F(ConfigTest, NumbersPrintPlainAndExact) {
  const Config c = load(minimal("", "lr = 3e-4\neps = 1e-8\n"), {"data.datasets.web.weight=123456.789"});
  const std::string printed = llmtrain::to_toml(c);
  for (const char* line : {"timeout_s = 1800.0  # default", "lr = 0.0003\n", "eps = 1e-8\n", "rope_theta = 10000.0",
                           "weight = 123456.789  # --set", "beta2 = 0.95  # default"})
    EXPECT_NE(printed.find(line), std::string::npos) << line << " in\n" << printed;
  // The shortest digits that read back as the same double, plain from 1e-4 to below 1e7, else with an exponent.
  const std::pair<double, const char*> cases[] = {
      {0.1, "0.1"},       {1.0 / 3.0, "0.3333333333333333"}, {2e-9, "2e-9"},       {0.0001, "0.0001"},
      {1.2345e-5, "1.2345e-5"}, {1e9, "1e9"},             {999999999.5, "9.999999995e8"}, {9999999.5, "9999999.5"}, {12345678.0, "1.2345678e7"},
      {999999.5, "999999.5"}};
  for (const auto& [weight, text] : cases) {
    char exact[64];
    std::snprintf(exact, sizeof exact, "%.17g", weight);
    const std::string printed = llmtrain::to_toml(load(minimal(), {std::string("data.datasets.web.weight=") + exact}));
    EXPECT_NE(printed.find(std::string("weight = ") + text + "  # --set"), std::string::npos) << text << " in\n" << printed;
    EXPECT_EQ(load(printed).data.datasets[0].weight, weight) << text;
  }
}

TEST_F(ConfigTest, UnknownKeySuggestsTheClosestOne) {
  const std::string e = error_of(minimal("d_modle = 3\n"));
  EXPECT_NE(e.find("input.toml:5: model.d_modle: unknown key (did you mean model.d_model?)"), std::string::npos) << e;
}

TEST_F(ConfigTest, KeyInTheWrongSectionNamesItsSection) {
  const std::string e = error_of(minimal("lr = 0.1\n"));
  EXPECT_NE(e.find("model.lr: unknown key (did you mean train.lr?)"), std::string::npos) << e;
}

TEST_F(ConfigTest, UnknownSectionAndUnknownDatasetKey) {
  EXPECT_NE(error_of(minimal() + "[trian]\nsteps = 3\n").find("trian: unknown section (did you mean train?)"),
            std::string::npos);
  const std::string e = error_of(minimal() + "wieght = 2\n");
  EXPECT_NE(e.find("data.datasets[0].wieght: unknown key (did you mean data.datasets[0].weight?)"), std::string::npos) << e;
}

TEST_F(ConfigTest, WrongTypesNameLineKeyAndValue) {
  std::string e = error_of(minimal("n_layers = \"four\"\n"));
  EXPECT_NE(e.find("input.toml:5: model.n_layers: expected an integer, got string \"four\""), std::string::npos) << e;
  e = error_of(minimal("n_layers = 2.5\n"));
  EXPECT_NE(e.find("model.n_layers: expected an integer, got number 2.5"), std::string::npos) << e;
  e = error_of(minimal("tie_embeddings = 1\n"));
  EXPECT_NE(e.find("model.tie_embeddings: expected true or false, got integer 1"), std::string::npos) << e;
  e = error_of(minimal("", "schedule = 3\n"));
  EXPECT_NE(e.find("train.schedule: expected a string, got integer 3"), std::string::npos) << e;
  e = error_of("[tokenizer]\npath = \"tok.json\"\n[data]\ndatasets = 3\n");
  EXPECT_NE(e.find("input.toml:4: data.datasets: expected [[data.datasets]] tables, got integer 3"), std::string::npos) << e;
}

TEST_F(ConfigTest, OutOfRangeAndBadChoice) {
  std::string e = error_of(minimal("n_layers = 0\n"));
  EXPECT_NE(e.find("input.toml:5: model.n_layers: value 0 out of range [1, 1024]"), std::string::npos) << e;
  e = error_of(minimal("", "beta2 = 1.5\n"));
  EXPECT_NE(e.find("train.beta2: value 1.5 out of range"), std::string::npos) << e;
  e = error_of(minimal("", "schedule = \"cosin\"\n"));
  EXPECT_NE(e.find("train.schedule: \"cosin\" is not one of \"cosine\", \"linear\", \"constant\" (did you mean cosine?)"),
            std::string::npos) << e;
}

TEST_F(ConfigTest, MissingReferencedFiles) {
  std::string text = minimal();
  text.replace(text.find("tok.json"), 8, "nope.json");
  std::string e = error_of(text);
  EXPECT_NE(e.find("input.toml:7: tokenizer.path: file not found: " + (dir_ / "nope.json").string()), std::string::npos) << e;
  text = minimal();
  text.replace(text.find("\"corpus\""), 8, "\"corpus/*.zst\"");
  e = error_of(text);
  EXPECT_NE(e.find("data.datasets[0].path: no file matches: " + (dir_ / "corpus/*.zst").string()), std::string::npos) << e;
  // A path the system refuses to look up (a name over NAME_MAX) is a missing file, not a crash.
  text = minimal();
  text.replace(text.find("tok.json"), 8, std::string(300, 'x'));
  e = error_of(text);
  EXPECT_NE(e.find("tokenizer.path: file not found: "), std::string::npos) << e;
  e = error_of("");
  EXPECT_NE(e.find("tokenizer.path: missing required key"), std::string::npos) << e;
  EXPECT_NE(error_of(minimal() + "\n[[data.datasets]]\npath = \"corpus\"\n").find("data.datasets[1].name: missing required key"),
            std::string::npos);
}

TEST_F(ConfigTest, MissingConfigurationFile) {
  try {
    llmtrain::load_config((dir_ / "absent.toml").string());
    FAIL() << "no error";
  } catch (const llmtrain::Error& e) {
    EXPECT_NE(std::string(e.what()).find("absent.toml: cannot open configuration file: no such file"), std::string::npos);
  }
}

TEST_F(ConfigTest, ConflictingSettings) {
  auto with_model = [&](const std::string& lines) {
    return "[model]\nvocab_size = 1000\n" + lines + "\n[tokenizer]\npath = \"tok.json\"\n[train]\nsteps = 10\nwarmup_steps = 2\n"
           "[[data.datasets]]\nname = \"web\"\npath = \"corpus\"\n";
  };
  std::string e = error_of(with_model("d_model = 64\nn_heads = 5\n"));
  EXPECT_NE(e.find("input.toml:3: model.d_model: 64 is not a multiple of model.n_heads = 5 (line 4)"), std::string::npos) << e;
  e = error_of(with_model("d_model = 64\nn_heads = 4\nn_kv_heads = 3\n"));
  EXPECT_NE(e.find("input.toml:5: model.n_kv_heads: 3 does not divide model.n_heads = 4"), std::string::npos) << e;
  e = error_of(with_model("d_model = 60\nn_heads = 4\n"));
  EXPECT_NE(e.find("must be even for rotary embeddings"), std::string::npos) << e;
  e = error_of(minimal("", "lr = 0.001\nmin_lr = 0.01\n"));
  EXPECT_NE(e.find("train.min_lr: 0.01 is larger than train.lr = 0.001"), std::string::npos) << e;
  std::string text = minimal();  // a run shorter than its warm-up is allowed: the job warns (job_options_test)
  EXPECT_EQ(load(text.replace(text.find("warmup_steps = 2"), 16, "warmup_steps = 20")).train.warmup_steps, 20);
  e = error_of(minimal("", "eval_every = 5\n"));
  EXPECT_NE(e.find("train.eval_every: evaluation is enabled but there is no [[data.eval_datasets]] table"), std::string::npos) << e;
  e = error_of(minimal() + "\n[[data.datasets]]\nname = \"web\"\npath = \"corpus\"\n");
  EXPECT_NE(e.find("data.datasets[1]: dataset name \"web\" is used twice"), std::string::npos) << e;
  e = error_of("[tokenizer]\npath = \"tok.json\"\n");
  EXPECT_NE(e.find("data.datasets: no [[data.datasets]] table"), std::string::npos) << e;
#ifndef LLMTRAIN_WITH_CUDA
  e = error_of(minimal() + "[parallel]\nbackend = \"nccl\"\n");
  EXPECT_NE(e.find("parallel.backend"), std::string::npos) << e;
#endif
}

TEST_F(ConfigTest, SyntaxErrorNamesLineAndColumn) {
  std::string e = error_of("[model]\nd_model = = 3\n");
  EXPECT_NE(e.find("input.toml:2:"), std::string::npos) << e;
  EXPECT_NE(e.find("TOML syntax error"), std::string::npos) << e;
  e = error_of(minimal("n_heads = 5\n"));  // a key defined twice
  EXPECT_NE(e.find("input.toml:5:"), std::string::npos) << e;
  EXPECT_NE(e.find("TOML syntax error"), std::string::npos) << e;
}

TEST(ConfigReference, DocsConfigMdIsGeneratedFromTheSchema) {
  const fs::path doc = fs::path(LLMTRAIN_SOURCE_DIR) / "docs" / "config.md";
  std::ifstream in(doc);
  ASSERT_TRUE(in) << doc;
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), llmtrain::config_reference_markdown())
      << "docs/config.md is stale: regenerate it with `build/bin/llmtrain --config-reference > docs/config.md`";
}

TEST(ConfigPresets, EveryFileInInputsLoads) {
  int presets = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(LLMTRAIN_SOURCE_DIR) / "inputs")) {
    if (entry.path().extension() != ".toml") continue;
    ++presets;
    EXPECT_NO_THROW(llmtrain::load_config(entry.path().string())) << entry.path();
  }
  EXPECT_GE(presets, 1);
}

}  // namespace
