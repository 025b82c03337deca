// The configuration schema (private to src/config): one FieldSpec per key, binding the key's name, type,
// default, range and help text to the struct member it fills. Each [section]'s keys are in its own file,
// schema_<section>.cpp; parse.cpp, print.cpp and reference.cpp walk them to parse, validate, print and document.
// Adding a key means adding one entry to its section's file and the member it fills in
// include/llmtrain/config/config.hpp; parsing, validation, `--dry-run` output and docs/config.md follow.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "llmtrain/config/config.hpp"

namespace llmtrain::schema {

using Value = std::variant<std::int64_t, double, bool, std::string>;

enum class Kind {
  Integer,
  Real,
  Boolean,
  String,
  Choice,      // a string from `choices`
  InputPath,   // must exist when given: a file or a directory
  InputGlob,   // a file, a directory or a glob pattern that matches at least one file
  OutputPath,  // created by the run; resolved against the config's directory, not checked
};

template <typename Target>
struct FieldSpec {
  std::string section;  // "model", or "data.datasets" for the keys of each [[data.datasets]] table
  std::string key;
  Kind kind;
  Value default_value;  // ignored when required
  bool required = false;
  double min = 0, max = 0;  // numbers only; inclusive
  std::vector<std::string> choices;
  std::string help;
  std::function<void(Target&, const Value&)> set;
  std::function<Value(const Target&)> get;

  std::string full_key() const { return section + "." + key; }
};

// One [section]: its name, a one-line description and its keys.
struct SectionSchema {
  std::string name;
  std::string description;
  std::vector<FieldSpec<Config>> fields;
};
SectionSchema model_section();
SectionSchema tokenizer_section();
SectionSchema data_section();  // its dataset tables: dataset_fields(), dataset_arrays()
SectionSchema train_section();
SectionSchema parallel_section();
SectionSchema checkpoint_section();
SectionSchema log_section();

// Keys of the plain sections ([model], [train], ...), in documentation order.
const std::vector<FieldSpec<Config>>& config_fields();
// Keys of one dataset table; the same set serves [[data.datasets]] and [[data.eval_datasets]].
const std::vector<FieldSpec<DatasetConfig>>& dataset_fields();
// Section names in documentation order, with a one-line description each.
const std::vector<std::pair<std::string, std::string>>& sections();
// Array-of-tables keys ("data.datasets", "data.eval_datasets") with a description each.
const std::vector<std::pair<std::string, std::string>>& dataset_arrays();

// The type column of docs/config.md: "integer", "number", "path or glob"...
std::string kind_name(Kind kind);

}  // namespace llmtrain::schema
