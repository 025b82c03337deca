// Parsing and validation of the TOML configuration (load_config, parse_config), driven by the schema (schema.hpp).
//
// Every message names the file, the line and the key, so a user with a 200-line config finds the mistake
// at once: "input.toml:12: model.d_modle: unknown key (did you mean model.d_model?)". A value that came
// from a `--set` override names the override instead: "--set train.stepz=7: unknown key (did you mean
// train.steps?)".
#include <glob.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <toml++/toml.h>

#include "file.hpp"
#include "overrides.hpp"
#include "schema.hpp"
#include "toml_text.hpp"
#include "llmtrain/config/config.hpp"
#include "llmtrain/core/error.hpp"

namespace llmtrain {
namespace fs = std::filesystem;
using schema::FieldSpec;
using schema::Kind;
using schema::Value;

namespace {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
    }
  }
  return row[b.size()];
}

// " (did you mean X?)" for the closest candidate within a third of the word's length, else "".
std::string suggestion(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const auto& candidate : candidates) {
    const std::size_t d = edit_distance(word, candidate);
    if (d < best_distance) best_distance = d, best = candidate;
  }
  return best.empty() ? "" : " (did you mean " + best + "?)";
}

// Collects file/line context and formats messages; one per parse.
struct Parse {
  std::string file;
  fs::path base_dir;
  std::map<std::string, int> lines;               // "section.key" -> line, for keys set by the file
  config_overrides::Origins origins;              // nodes put into the tree by overrides -> "--set ..."
  std::map<std::string, std::string> overridden;  // "section.key" -> "--set ...", for keys set by overrides

  const config_overrides::Origin* origin_of(const toml::node& node) const {
    auto it = origins.find(&node);
    return it == origins.end() ? nullptr : &it->second;
  }
  // Where `key` got its value, for the other key named in a conflict: " (line 12)", " (--set ...)", " (default)".
  std::string source_of(const std::string& key) const {
    if (auto it = overridden.find(key); it != overridden.end()) return " (" + it->second + ")";
    if (auto it = lines.find(key); it != lines.end()) return " (line " + std::to_string(it->second) + ")";
    return " (default)";
  }
  // Relative paths in the file resolve against its directory, those in an override against the cwd.
  fs::path base_for(const toml::node& node) const { return origin_of(node) ? fs::current_path() : base_dir; }

  [[noreturn]] void fail(const std::string& key, const std::string& problem) const {
    if (auto it = overridden.find(key); it != overridden.end()) LLMTRAIN_FAIL(it->second, ": ", problem);
    auto it = lines.find(key);
    LLMTRAIN_FAIL(it == lines.end() ? file : file + ":" + std::to_string(it->second), ": ", key, ": ", problem);
  }
  [[noreturn]] void fail_at(const toml::node& node, const std::string& key, const std::string& problem) const {
    if (const config_overrides::Origin* origin = origin_of(node)) LLMTRAIN_FAIL(origin->text, ": ", problem);
    LLMTRAIN_FAIL(file, ":", node.source().begin.line, ": ", key, ": ", problem);
  }
};

std::string describe(const toml::node& node) {
  std::ostringstream out;
  switch (node.type()) {
    case toml::node_type::string: out << "string \"" << node.as_string()->get() << "\""; break;
    case toml::node_type::integer: out << "integer " << node.as_integer()->get(); break;
    case toml::node_type::floating_point: out << "number " << schema::real_to_toml(node.as_floating_point()->get()); break;
    case toml::node_type::boolean: out << "boolean " << (node.as_boolean()->get() ? "true" : "false"); break;
    case toml::node_type::table: out << "a table"; break;
    case toml::node_type::array: out << "an array"; break;
    default: out << "a date/time"; break;
  }
  return out.str();
}

std::string resolve_path(const fs::path& base_dir, const std::string& path) {
  if (path.empty() || fs::path(path).is_absolute()) return path;
  return (base_dir / path).lexically_normal().string();
}

bool glob_matches_something(const std::string& pattern) {
  glob_t result{};
  const int status = glob(pattern.c_str(), 0, nullptr, &result);
  const bool found = status == 0 && result.gl_pathc > 0;
  globfree(&result);
  return found;
}

// Converts a TOML value to the field's type, checking type, range and choices.
template <typename Target>
Value convert(const Parse& parse, const FieldSpec<Target>& spec, const toml::node& node,
              const std::string& key) {
  const std::string got = "got " + describe(node);
  switch (spec.kind) {
    case Kind::Integer: {
      if (!node.is_integer()) parse.fail_at(node, key, "expected an integer, " + got);
      const std::int64_t v = node.as_integer()->get();
      if (v < spec.min || v > spec.max)
        parse.fail_at(node, key, cat("value ", v, " out of range [", static_cast<std::int64_t>(spec.min), ", ",
                                     static_cast<std::int64_t>(spec.max), "]"));
      return v;
    }
    case Kind::Real: {
      if (!node.is_number()) parse.fail_at(node, key, "expected a number, " + got);
      const double v = node.is_integer() ? static_cast<double>(node.as_integer()->get()) : node.as_floating_point()->get();
      if (!(v >= spec.min && v <= spec.max)) {
        const std::string written = node.is_integer() ? std::to_string(node.as_integer()->get()) : schema::real_to_toml(v);
        parse.fail_at(node, key, cat("value ", written, " out of range [", schema::real_to_toml(spec.min), ", ",
                                     schema::real_to_toml(spec.max), "]"));
      }
      return v;
    }
    case Kind::Boolean:
      if (!node.is_boolean()) parse.fail_at(node, key, "expected true or false, " + got);
      return node.as_boolean()->get();
    default:
      break;
  }
  if (!node.is_string()) parse.fail_at(node, key, "expected a string, " + got);
  std::string v = node.as_string()->get();
  if (spec.kind == Kind::Choice && std::find(spec.choices.begin(), spec.choices.end(), v) == spec.choices.end()) {
    std::string allowed;
    for (const auto& c : spec.choices) allowed += (allowed.empty() ? "" : ", ") + ("\"" + c + "\"");
    parse.fail_at(node, key, "\"" + v + "\" is not one of " + allowed + suggestion(v, spec.choices));
  }
  if (spec.kind != Kind::InputPath && spec.kind != Kind::InputGlob && spec.kind != Kind::OutputPath) return v;
  v = resolve_path(parse.base_for(node), v);
  if (v.empty()) return v;
  const bool exists = config_file::exists(v);
  // Inputs are files or directories: a FIFO or a device would block or never end when read.
  if (spec.kind != Kind::OutputPath && exists && !config_file::is_file_or_directory(v))
    parse.fail_at(node, key, v + " is " + config_file::kind_of(v) + ", not a file or directory");
  if (spec.kind == Kind::InputPath && !exists) parse.fail_at(node, key, "file not found: " + v);
  if (spec.kind == Kind::InputGlob && !exists && !glob_matches_something(v))
    parse.fail_at(node, key, "no file matches: " + v);
  if (spec.kind == Kind::OutputPath && exists && !config_file::is_directory(v))
    parse.fail_at(node, key, v + " is " + config_file::kind_of(v) + ", not a directory");
  return v;
}

template <typename Target>
void apply_defaults(Target& target, const std::vector<FieldSpec<Target>>& fields) {
  for (const auto& spec : fields)
    if (!spec.required) spec.set(target, spec.default_value);
    else spec.set(target, std::string());
}

// " (did you mean ...)" for an unknown key: the closest key of the same table, else a key of that name
// in another section (a key put under the wrong [section]).
// " (did you mean section.key?)" when `key` is a key of some section, else "".
std::string key_of_another_section(const std::string& key) {
  for (const auto& spec : schema::config_fields())
    if (spec.key == key) return " (did you mean " + spec.full_key() + "?)";
  return "";
}

std::string unknown_key_hint(const std::string& prefix, const std::string& key, const std::vector<std::string>& known) {
  const std::string near = suggestion(key, known);
  if (!near.empty()) return " (did you mean " + prefix + "." + near.substr(15);
  return key_of_another_section(key);
}

// Fills `target` from one TOML table whose keys must all be in `fields` (except `skip`, read by the
// caller); `prefix` names the table in messages.
template <typename Target>
void read_table(Parse& parse, const toml::table& table, const std::vector<FieldSpec<Target>>& fields,
                const std::string& prefix, Target& target, const std::set<std::string>& skip = {}) {
  std::vector<std::string> known(skip.begin(), skip.end());
  for (const auto& spec : fields) known.push_back(spec.key);
  for (const auto& [name, node] : table) {
    const std::string key(name.str());
    const std::string full = prefix + "." + key;
    const config_overrides::Origin* origin = parse.origin_of(node);
    if (origin) parse.overridden[full] = origin->text;
    else parse.lines[full] = node.source().begin.line;
    if (skip.count(key)) continue;
    auto spec = std::find_if(fields.begin(), fields.end(), [&](const auto& s) { return s.key == key; });
    if (spec == fields.end())  // an override's hint names the table as the override wrote it
      parse.fail_at(node, full, "unknown key" + unknown_key_hint(origin ? origin->table : prefix, key, known));
    spec->set(target, convert(parse, *spec, node, full));
  }
  for (const auto& spec : fields)
    if (spec.required && !table.contains(spec.key))
      LLMTRAIN_FAIL(parse.file, ":", table.source().begin.line, ": ", prefix, ".", spec.key, ": missing required key");
}

std::vector<DatasetConfig> read_datasets(Parse& parse, const toml::node& node, const std::string& prefix) {
  const toml::array* array = node.as_array();
  if (!array || !array->is_array_of_tables())
    parse.fail_at(node, prefix, "expected [[" + prefix + "]] tables, got " + describe(node));
  std::vector<DatasetConfig> datasets;
  for (std::size_t i = 0; i < array->size(); ++i) {
    DatasetConfig dataset;
    apply_defaults(dataset, schema::dataset_fields());
    const std::string name = prefix + "[" + std::to_string(i) + "]";
    parse.lines[name] = (*array)[i].source().begin.line;
    read_table(parse, *(*array)[i].as_table(), schema::dataset_fields(), name, dataset);
    datasets.push_back(std::move(dataset));
  }
  return datasets;
}

void read_section(Parse& parse, const std::string& section, const toml::table& table, Config& config) {
  std::vector<FieldSpec<Config>> fields;
  for (const auto& spec : schema::config_fields())
    if (spec.section == section) fields.push_back(spec);
  std::set<std::string> arrays;
  if (section == "data") {
    arrays = {"datasets", "eval_datasets"};
    if (const toml::node* node = table.get("datasets")) config.data.datasets = read_datasets(parse, *node, "data.datasets");
    if (const toml::node* node = table.get("eval_datasets"))
      config.data.eval_datasets = read_datasets(parse, *node, "data.eval_datasets");
  }
  read_table(parse, table, fields, section, config, arrays);
}

// Settings that are valid one by one but not together.
void check_conflicts(const Parse& parse, const Config& c) {
  const auto& m = c.model;
  if (m.d_model % m.n_heads != 0)
    parse.fail("model.d_model",
               cat(m.d_model, " is not a multiple of model.n_heads = ", m.n_heads, parse.source_of("model.n_heads")));
  if ((m.d_model / m.n_heads) % 2 != 0)
    parse.fail("model.d_model", cat("head size d_model / n_heads = ", m.d_model / m.n_heads,
                                    " must be even for rotary embeddings"));
  const std::int64_t kv_heads = m.n_kv_heads == 0 ? m.n_heads : m.n_kv_heads;
  if (m.n_heads % kv_heads != 0)
    parse.fail("model.n_kv_heads",
               cat(kv_heads, " does not divide model.n_heads = ", m.n_heads, parse.source_of("model.n_heads")));
  if (c.train.min_lr > c.train.lr)
    parse.fail("train.min_lr", cat(schema::real_to_toml(c.train.min_lr), " is larger than train.lr = ",
                                    schema::real_to_toml(c.train.lr), parse.source_of("train.lr")));
  if (c.data.datasets.empty())
    parse.fail("data.datasets", "no [[data.datasets]] table: at least one training dataset is required");
  if (c.train.eval_every > 0 && c.data.eval_datasets.empty())
    parse.fail("train.eval_every", "evaluation is enabled but there is no [[data.eval_datasets]] table");
  for (const auto* list : {&c.data.datasets, &c.data.eval_datasets}) {
    std::set<std::string> names;
    for (std::size_t i = 0; i < list->size(); ++i)
      if (!names.insert((*list)[i].name).second) {
        const std::string key = std::string(list == &c.data.datasets ? "data.datasets" : "data.eval_datasets") +
                                "[" + std::to_string(i) + "]";
        // A name an override gave is reported against that override.
        parse.fail(parse.overridden.count(key + ".name") ? key + ".name" : key,
                   "dataset name \"" + (*list)[i].name + "\" is used twice");
      }
  }
#ifndef LLMTRAIN_WITH_CUDA
  if (c.parallel.backend == "nccl")
    parse.fail("parallel.backend", "\"nccl\" needs a build with LLMTRAIN_ENABLE_CUDA=ON; this build has MPI only");
#endif
}

}  // namespace

Config default_config() {
  Config config;
  apply_defaults(config, schema::config_fields());
  return config;
}

Config parse_config(const std::string& toml_text, const std::string& source_name, const std::string& base_dir,
                    const std::vector<std::string>& overrides) {
  Parse parse{source_name, fs::path(base_dir), {}, {}, {}};
  toml::table root;
  try {
    root = toml::parse(toml_text, source_name);
  } catch (const toml::parse_error& e) {
    LLMTRAIN_FAIL(source_name, ":", e.source().begin.line, ":", e.source().begin.column,
                  ": TOML syntax error: ", e.description());
  }
  config_overrides::apply(root, overrides, parse.origins);
  Config config = default_config();
  config.source_file = source_name;
  std::vector<std::string> section_names;
  for (const auto& [name, description] : schema::sections()) section_names.push_back(name);
  for (const auto& [name, node] : root) {
    const std::string section(name.str());
    if (std::find(section_names.begin(), section_names.end(), section) == section_names.end()) {
      std::string hint = key_of_another_section(section);  // a top-level `lr = ...` belongs in [train]
      if (hint.empty()) hint = suggestion(section, section_names);
      parse.fail_at(node, section, (node.is_table() ? "unknown section" : "unknown key") + hint);
    }
    if (!node.is_table()) parse.fail_at(node, section, "expected a [" + section + "] table, got " + describe(node));
    read_section(parse, section, *node.as_table(), config);
  }
  if (!root.contains("tokenizer"))
    parse.fail("tokenizer.path", "missing required key (add a [tokenizer] section with path = ...)");
  check_conflicts(parse, config);
  config.source_lines = parse.lines;
  config.overrides = parse.overridden;
  return config;
}

Config load_config(const std::string& path, const std::vector<std::string>& overrides) {
  const std::string text = config_file::read(path);
  return parse_config(text, path, fs::absolute(path).parent_path().string(), overrides);
}

}  // namespace llmtrain
