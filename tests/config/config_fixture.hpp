// The fixture of the configuration tests: a temporary directory with a tokenizer file and a one-file corpus,
// a valid minimal configuration to vary, and helpers that load text (with optional --set overrides) or
// return the message of the error it raises.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "llmtrain/config/config.hpp"
#include "llmtrain/core/error.hpp"

namespace llmtrain_test {

namespace fs = std::filesystem;

class ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/llmtrain-config-XXXXXX";
    dir_ = mkdtemp(pattern);
    std::ofstream(dir_ / "tok.json") << "{}";
    fs::create_directories(dir_ / "corpus");
    std::ofstream(dir_ / "corpus" / "a.jsonl") << "{\"text\": \"hello\"}\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A valid configuration; `extra` is appended (TOML allows re-opening nothing, so tests pass whole sections).
  std::string minimal(const std::string& model = "", const std::string& train = "", const std::string& tail = "") {
    return "[model]\nd_model = 64\nn_heads = 4\nvocab_size = 1000\n" + model +
           "\n[tokenizer]\npath = \"tok.json\"\n"
           "\n[train]\nsteps = 10\nwarmup_steps = 2\n" + train +
           "\n[[data.datasets]]\nname = \"web\"\npath = \"corpus\"\nweight = 0.7\n" + tail;
  }

  llmtrain::Config load(const std::string& text, const std::vector<std::string>& overrides = {}) {
    const fs::path file = dir_ / "input.toml";
    std::ofstream(file) << text;
    return llmtrain::load_config(file.string(), overrides);
  }

  // The message of the error that loading `text` raises ("" if it loads).
  std::string error_of(const std::string& text, const std::vector<std::string>& overrides = {}) {
    try {
      load(text, overrides);
    } catch (const llmtrain::Error& e) {
      return e.what();
    }
    return "";
  }

  fs::path dir_;
};

}  // namespace llmtrain_test
