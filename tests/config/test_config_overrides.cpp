// `--set section.key=value` overrides: every value type, datasets by name (dotted names quoted), paths
// against the working directory, precedence, the printed effective configuration, and every class of bad
// override with its exact message, which names the override.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "config_fixture.hpp"
#include "llmtrain/config/config.hpp"

namespace fs = std::filesystem;
using llmtrain::Config;

namespace {

using llmtrain_test::ConfigTest;

// Runs the test body in another working directory and restores the previous one, whatever happens.
struct WorkingDirectory {
  explicit WorkingDirectory(const fs::path& dir) : previous(fs::current_path()) { fs::current_path(dir); }
  ~WorkingDirectory() { fs::current_path(previous); }
  fs::path previous;
};

// minimal() plus a dataset whose name has a dot and an evaluation dataset.
std::string with_more_datasets(const std::string& text) {
  return text + "\n[[data.datasets]]\nname = \"web.en\"\npath = \"corpus\"\n"
                "\n[[data.eval_datasets]]\nname = \"held\"\npath = \"corpus\"\n";
}

TEST_F(ConfigTest, OverridesOfEachValueType) {
  const Config c = load(minimal(), {"train.steps=7", "train.lr=3e-4", "train.min_lr=0", "model.tie_embeddings=true",
                                    "parallel.backend=mpi", "tokenizer.eos_token=</s>", "tokenizer.bos_token=\"<s>\"",
                                    "log.level='debug'", "data.threads = 3"});
  EXPECT_EQ(c.train.steps, 7);
  EXPECT_DOUBLE_EQ(c.train.lr, 3e-4);
  EXPECT_DOUBLE_EQ(c.train.min_lr, 0.0);  // an integer where a number is expected, as in a file
  EXPECT_TRUE(c.model.tie_embeddings);
  EXPECT_EQ(c.parallel.backend, "mpi");
  EXPECT_EQ(c.tokenizer.eos_token, "</s>");  // unquoted text
  EXPECT_EQ(c.tokenizer.bos_token, "<s>");   // a quoted TOML string
  EXPECT_EQ(c.log.level, "debug");           // a literal (single-quoted) TOML string
  EXPECT_EQ(c.data.threads, 3);              // spaces around '=' are allowed
}

TEST_F(ConfigTest, ValuesOfTextKeysStayTextAsWritten) {
  const Config c = load(minimal(), {"data.datasets.web.name=2024", "tokenizer.eos_token=true",
                                    "data.datasets.2024.field=a = b"});
  EXPECT_EQ(c.data.datasets[0].name, "2024");  // not the integer 2024
  EXPECT_EQ(c.tokenizer.eos_token, "true");
  EXPECT_EQ(c.data.datasets[0].field, "a = b");  // only the first '=' separates key and value
}

TEST_F(ConfigTest, OverridePathsResolveAgainstTheWorkingDirectory) {
  fs::create_directories(dir_ / "cwd" / "corpus2");
  std::ofstream(dir_ / "cwd" / "tok2.json") << "{}";
  std::ofstream(dir_ / "cwd" / "corpus2" / "b.jsonl") << "{\"text\": \"hi\"}\n";
  const WorkingDirectory cwd(dir_ / "cwd");
  const Config c = load(with_more_datasets(minimal()), {"tokenizer.path=tok2.json", "data.datasets.web.path=corpus2/*.jsonl",
                                                        "train.run_dir=runs/r"});
  EXPECT_EQ(c.tokenizer.path, (dir_ / "cwd" / "tok2.json").string());
  EXPECT_EQ(c.data.datasets[0].path, (dir_ / "cwd" / "corpus2" / "*.jsonl").string());
  EXPECT_EQ(c.train.run_dir, (dir_ / "cwd" / "runs" / "r").string());
  EXPECT_EQ(c.data.datasets[1].path, (dir_ / "corpus").string());  // the file's paths: against its directory
  // tok.json is next to the file but not in the working directory.
  EXPECT_EQ(error_of(minimal(), {"tokenizer.path=tok.json"}),
            "--set tokenizer.path=tok.json: file not found: " + (dir_ / "cwd" / "tok.json").string());
}

TEST_F(ConfigTest, DatasetsAreAddressedByName) {
  const Config c = load(with_more_datasets(minimal()), {"data.datasets.web.weight=2", "data.datasets.\"web.en\".weight=0.5",
                                                        "data.datasets.'web.en'.field=body",
                                                        "data.eval_datasets.held.field=content"});
  ASSERT_EQ(c.data.datasets.size(), 2u);
  EXPECT_DOUBLE_EQ(c.data.datasets[0].weight, 2.0);
  EXPECT_DOUBLE_EQ(c.data.datasets[1].weight, 0.5);
  EXPECT_EQ(c.data.datasets[1].field, "body");
  EXPECT_EQ(c.data.datasets[0].field, "text");
  EXPECT_EQ(c.data.eval_datasets[0].field, "content");
  EXPECT_EQ(c.overrides.at("data.datasets[1].weight"), "--set data.datasets.\"web.en\".weight=0.5");
  const std::string printed = llmtrain::to_toml(c);
  EXPECT_NE(printed.find("weight = 0.5  # --set\n"), std::string::npos) << printed;
  EXPECT_NE(printed.find("field = \"text\"  # default\n"), std::string::npos) << printed;  // dataset keys too
  // A renamed dataset is addressed by its new name in the overrides that follow.
  EXPECT_DOUBLE_EQ(load(minimal(), {"data.datasets.web.name=www", "data.datasets.www.weight=3"}).data.datasets[0].weight, 3.0);
}

TEST_F(ConfigTest, BadDatasetAddressesListTheNames) {
  const std::string text = with_more_datasets(minimal());
  EXPECT_EQ(error_of(text, {"data.datasets.wbe.weight=2"}),
            "--set data.datasets.wbe.weight=2: no dataset named \"wbe\" in [[data.datasets]] (names: web, \"web.en\")");
  EXPECT_EQ(error_of(minimal(), {"data.eval_datasets.held.weight=2"}),
            "--set data.eval_datasets.held.weight=2: no dataset named \"held\" in [[data.eval_datasets]] (there are none)");
  const std::string by_name = ": a dataset is addressed by its name: data.datasets.NAME.key=value (quote a name that "
                              "has dots: data.datasets.\"web.en\".weight=0.5)";
  EXPECT_EQ(error_of(text, {"data.datasets.web.en.weight=2"}), "--set data.datasets.web.en.weight=2" + by_name);
  EXPECT_EQ(error_of(text, {"data.datasets=3"}), "--set data.datasets=3" + by_name);
  EXPECT_EQ(error_of(text, {"data.datasets.\"web.en\".name=web"}),
            "--set data.datasets.\"web.en\".name=web: dataset name \"web\" is used twice");
}

TEST_F(ConfigTest, OverrideBeatsTheFileAndTheLastOverrideWins) {
  const Config c = load(minimal(), {"train.steps=7", "train.steps=8", "log.level=debug"});
  EXPECT_EQ(c.train.steps, 8);
  EXPECT_EQ(c.overrides.at("train.steps"), "--set train.steps=8");
  EXPECT_EQ(c.source_lines.count("train.steps"), 0u);
  EXPECT_EQ(c.train.warmup_steps, 2);  // the file's value where no override applies
  EXPECT_EQ(c.log.level, "debug");     // a section the file does not have
  const std::string printed = llmtrain::to_toml(c);
  EXPECT_NE(printed.find("steps = 8  # --set\n"), std::string::npos) << printed;
  EXPECT_NE(printed.find("warmup_steps = 2\n"), std::string::npos) << printed;
  EXPECT_NE(printed.find("level = \"debug\"  # --set\n"), std::string::npos) << printed;
  // The printed configuration is the effective one: loaded without overrides it gives the same values.
  const Config again = load(printed);
  EXPECT_EQ(again.train.steps, 8);
  EXPECT_EQ(again.log.level, "debug");
  EXPECT_EQ(llmtrain::to_toml(again).find("# --set"), std::string::npos);
}

TEST_F(ConfigTest, OverrideCanGiveARequiredKey) {
  const std::string text = "[[data.datasets]]\nname = \"web\"\npath = \"corpus\"\n";
  EXPECT_EQ(load(text, {"tokenizer.path=" + (dir_ / "tok.json").string()}).tokenizer.path, (dir_ / "tok.json").string());
}

TEST_F(ConfigTest, BadValuesNameTheOverride) {
  const auto error = [&](const std::string& override) { return error_of(minimal(), {override}); };
  EXPECT_EQ(error("train.stepz=7"), "--set train.stepz=7: unknown key (did you mean train.steps?)");
  EXPECT_EQ(error("model.lr=0.1"), "--set model.lr=0.1: unknown key (did you mean train.lr?)");
  EXPECT_EQ(error("trian.steps=7"), "--set trian.steps=7: unknown section (did you mean train?)");
  EXPECT_EQ(error("checkpoint.every=7"), "--set checkpoint.every=7: unknown key");
  EXPECT_EQ(error("data.datasets.web.wieght=2"),
            "--set data.datasets.web.wieght=2: unknown key (did you mean data.datasets.web.weight?)");
  EXPECT_EQ(error("train.steps=seven"), "--set train.steps=seven: expected an integer, got string \"seven\"");
  EXPECT_EQ(error("train.steps=7.5"), "--set train.steps=7.5: expected an integer, got number 7.5");
  EXPECT_EQ(error("train.steps=\"7\""), "--set train.steps=\"7\": expected an integer, got string \"7\"");
  EXPECT_EQ(error("train.lr=fast"), "--set train.lr=fast: expected a number, got string \"fast\"");
  EXPECT_EQ(error("model.tie_embeddings=yes"), "--set model.tie_embeddings=yes: expected true or false, got string \"yes\"");
  EXPECT_EQ(error("model.n_layers=0"), "--set model.n_layers=0: value 0 out of range [1, 1024]");
  EXPECT_EQ(error("data.datasets.web.weight=-1"), "--set data.datasets.web.weight=-1: value -1 out of range [1e-9, 1e9]");
  EXPECT_EQ(error("train.schedule=cosin"),
            "--set train.schedule=cosin: \"cosin\" is not one of \"cosine\", \"linear\", \"constant\" (did you mean cosine?)");
  EXPECT_EQ(error("tokenizer.path=/nonexistent/tok.json"),
            "--set tokenizer.path=/nonexistent/tok.json: file not found: /nonexistent/tok.json");
  EXPECT_EQ(error("data.datasets.web.path=/nonexistent/*.jsonl"),
            "--set data.datasets.web.path=/nonexistent/*.jsonl: no file matches: /nonexistent/*.jsonl");
}

TEST_F(ConfigTest, MalformedOverrides) {
  const auto error = [&](const std::string& override) { return error_of(minimal(), {override}); };
  const std::string forms =
      ": expected section.key=value or data.datasets.NAME.key=value (data.eval_datasets.NAME.key=value)";
  EXPECT_EQ(error("train.steps"), "--set train.steps" + forms);
  EXPECT_EQ(error("steps=7"), "--set steps=7" + forms + " (did you mean train.steps=7?)");
  EXPECT_EQ(error("train.steps.x=7"), "--set train.steps.x=7" + forms);
  const std::string quote_hint = " is not a TOML key (quote a name that has dots: data.datasets.\"web.en\".weight=0.5)";
  EXPECT_EQ(error("train..steps=7"), "--set train..steps=7: 'train..steps'" + quote_hint);
  EXPECT_EQ(error("=7"), "--set =7: ''" + quote_hint);
  // A configuration is TOML, which is UTF-8: a byte that is no UTF-8 could not be printed back.
  EXPECT_EQ(error("tokenizer.eos_token=a\xff"), "--set tokenizer.eos_token=a\xff: the value is not valid UTF-8");
  EXPECT_EQ(error("tokenizer.eos_token=\xc0\x80"), "--set tokenizer.eos_token=\xc0\x80: the value is not valid UTF-8");
  EXPECT_EQ(error("tokenizer.eos_token=\xed\xa0\x80"),
            "--set tokenizer.eos_token=\xed\xa0\x80: the value is not valid UTF-8");  // a surrogate
  EXPECT_EQ(error("tokenizer.eos_token=\xf0\x9f\x99\x82"), "");                   // U+1F642
  EXPECT_EQ(error("tokenizer.eos_token=\"</s>"),
            "--set tokenizer.eos_token=\"</s>: \"</s> is not a valid quoted TOML string");
}

TEST_F(ConfigTest, ConflictsNameTheOverrideThatCausedThem) {
  const std::string file = (dir_ / "input.toml").string();
  EXPECT_EQ(error_of(minimal("", "lr = 0.001\n"), {"train.min_lr=0.01"}),
            "--set train.min_lr=0.01: 0.01 is larger than train.lr = 0.001 (line 12)");
  EXPECT_EQ(error_of(minimal("", "min_lr = 0.0001\n"), {"train.lr=0.00005"}),
            file + ":12: train.min_lr: 0.0001 is larger than train.lr = 5e-5 (--set train.lr=0.00005)");
  EXPECT_EQ(error_of(minimal(), {"train.lr=0.001", "train.min_lr=0.002"}),
            "--set train.min_lr=0.002: 0.002 is larger than train.lr = 0.001 (--set train.lr=0.001)");
  EXPECT_EQ(error_of(minimal(), {"model.n_heads=5"}),
            file + ":2: model.d_model: 64 is not a multiple of model.n_heads = 5 (--set model.n_heads=5)");
  EXPECT_EQ(error_of(minimal(), {"train.lr=0.001", "train.min_lr=0.0001"}), "");  // the same keys, consistent
}

TEST_F(ConfigTest, ParseConfigTakesOverridesToo) {
  const Config c = llmtrain::parse_config(minimal(), "memory.toml", dir_.string(), {"train.steps=3"});
  EXPECT_EQ(c.train.steps, 3);
}

}  // namespace
