// The configuration schema's machinery (private to src/core): one FieldSpec per key, binding the key's
// name, type, default, range and help text to the struct member it fills. The table itself is in
// config_schema.cpp; config.cpp walks it to parse, validate, print and document.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "llmtrain/core/config.hpp"

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

// Keys of the plain sections ([model], [train], ...), in documentation order.
const std::vector<FieldSpec<Config>>& config_fields();
// Keys of one dataset table; the same set serves [[data.datasets]] and [[data.eval_datasets]].
const std::vector<FieldSpec<DatasetConfig>>& dataset_fields();
// Section names in documentation order, with a one-line description each.
const std::vector<std::pair<std::string, std::string>>& sections();
// Array-of-tables keys ("data.datasets", "data.eval_datasets") with a description each.
const std::vector<std::pair<std::string, std::string>>& dataset_arrays();

std::string kind_name(Kind kind);
// TOML text of a value: integers as they are, numbers in the shortest form that reads back as the same double
// (plain from 1e-4 to below 1e7: "1800.0", "0.0003"; else "1e-8", "1e9"), strings quoted with TOML's escapes.
std::string value_to_toml(const Value& value);
std::string real_to_toml(double value);

}  // namespace llmtrain::schema
