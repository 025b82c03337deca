// Applying `--set` overrides to the parsed configuration tree (config_overrides.hpp).
//
// The key is TOML dotted-key syntax, so a dataset name with a dot is quoted as in a file:
// data.datasets."web.en".weight=0.5. The value is typed by the schema: a key that holds text takes the
// text as written (quotes optional), other keys take a TOML value (7, 3e-4, true).
#include "overrides.hpp"

#include <algorithm>
#include <cstdint>

#include "schema.hpp"
#include "toml_text.hpp"
#include "llmtrain/core/error.hpp"

namespace llmtrain::config_overrides {
namespace {

const char* const kForms =
    "expected section.key=value or data.datasets.NAME.key=value (data.eval_datasets.NAME.key=value)";

std::string trim(const std::string& s) {
  const std::size_t first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// The first '=' outside a quoted part of the key, or npos.
std::size_t assignment(const std::string& text) {
  char quote = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote) {
      if (c == '\\' && quote == '"') ++i;
      else if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '=') {
      return i;
    }
  }
  return std::string::npos;
}

// The parts of a TOML dotted key (data.datasets."web.en".weight -> data, datasets, web.en, weight), parsed
// by the TOML parser itself so quoting means what it means in a file; empty when it is not a key.
std::vector<std::string> key_parts(const std::string& key) {
  toml::table parsed;
  try {
    parsed = toml::parse(key + " = 0");
  } catch (const toml::parse_error&) {
    return {};
  }
  std::vector<std::string> parts;
  const toml::table* table = &parsed;
  while (table->size() == 1) {
    const auto entry = table->begin();  // the entry refers into the iterator: keep it alive
    parts.emplace_back(entry->first.str());
    if (!entry->second.is_table()) return parts;
    table = entry->second.as_table();
  }
  return {};
}

// A dataset name as it is written in a --set key: bare when TOML allows it, else quoted.
std::string as_key(const std::string& name) {
  const bool bare = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
  return bare ? name : schema::value_to_toml(name);
}

bool holds_text(const std::string& section, const std::string& key) {
  const auto text = [](schema::Kind kind) {
    return kind != schema::Kind::Integer && kind != schema::Kind::Real && kind != schema::Kind::Boolean;
  };
  if (section == "data.datasets") {
    for (const auto& spec : schema::dataset_fields())
      if (spec.key == key) return text(spec.kind);
    return false;
  }
  for (const auto& spec : schema::config_fields())
    if (spec.section == section && spec.key == key) return text(spec.kind);
  return false;
}

// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or code points above U+10FFFF): a
// configuration is TOML, which is UTF-8, and its printed form must load back.
bool valid_utf8(const std::string& text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char lead = byte(i);
    const std::size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
    if (length == 0 || i + length > text.size()) return false;
    std::uint32_t code = length == 1 ? lead : lead & (0x7F >> length);
    for (std::size_t k = 1; k < length; ++k) {
      if ((byte(i + k) & 0xC0) != 0x80) return false;
      code = (code << 6) | (byte(i + k) & 0x3F);
    }
    static const std::uint32_t kLeast[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code < kLeast[length] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return false;
    i += length;
  }
  return true;
}

// A table holding the override's value under "v". Text that is no TOML value stays text, so a wrong type
// is reported by the same check as in a file ("expected an integer, got string \"seven\"").
toml::table typed_value(const std::string& origin, const std::string& text, bool text_key) {
  toml::table parsed;
  bool single = false;
  try {
    parsed = toml::parse("v = " + text);
    single = parsed.size() == 1 && parsed.contains("v");
  } catch (const toml::parse_error&) {
  }
  if (!text.empty() && (text[0] == '"' || text[0] == '\'')) {
    LLMTRAIN_CHECK(single && parsed["v"].is_string(), origin, ": ", text, " is not a valid quoted TOML string");
    return parsed;
  }
  if (single && !(text_key && !parsed["v"].is_string())) return parsed;
  LLMTRAIN_CHECK(valid_utf8(text), origin, ": the value is not valid UTF-8");
  toml::table holder;
  holder.insert("v", text);
  return holder;
}

toml::table& section_table(toml::table& root, const std::string& section, const std::string& origin,
                           Origins& origins) {
  toml::node* node = root.get(section);
  if (!node) {
    node = &root.insert(section, toml::table{}).first->second;
    origins[node] = {origin, ""};  // an unknown section is reported against the override that made it
  }
  LLMTRAIN_CHECK(node->is_table(), origin, ": '", section, "' in the file is not a [", section, "] table");
  return *node->as_table();
}

// The [[data.<array>]] table whose name is `name`; an unknown name is an error listing the names.
toml::table& dataset_table(toml::table& root, const std::string& array, const std::string& name,
                           const std::string& origin) {
  std::string names;
  if (toml::array* tables = root["data"][array].as_array()) {
    for (toml::node& element : *tables) {
      toml::table* table = element.as_table();
      const toml::value<std::string>* found = table ? table->get_as<std::string>("name") : nullptr;
      if (!found) continue;
      if (found->get() == name) return *table;
      names += (names.empty() ? "" : ", ") + as_key(found->get());
    }
  }
  LLMTRAIN_FAIL(origin, ": no dataset named ", schema::value_to_toml(name), " in [[data.", array, "]] (",
                names.empty() ? "there are none" : "names: " + names, ")");
}

void apply_one(toml::table& root, const std::string& text, Origins& origins) {
  const std::string origin = "--set " + text;
  const std::size_t equals = assignment(text);
  LLMTRAIN_CHECK(equals != std::string::npos, origin, ": ", kForms);
  const std::string key = trim(text.substr(0, equals)), value = trim(text.substr(equals + 1));
  const std::vector<std::string> parts = key_parts(key);
  LLMTRAIN_CHECK(!parts.empty(), origin, ": '", key, "' is not a TOML key (quote a name that has dots: ",
                 "data.datasets.\"web.en\".weight=0.5)");
  if (parts.size() == 1) {  // a key without its section: point at the section that has it
    for (const auto& spec : schema::config_fields())
      if (spec.key == parts[0]) LLMTRAIN_FAIL(origin, ": ", kForms, " (did you mean ", spec.full_key(), "=", value, "?)");
    LLMTRAIN_FAIL(origin, ": ", kForms);
  }
  const bool dataset_array = parts[0] == "data" && (parts[1] == "datasets" || parts[1] == "eval_datasets");
  toml::table* table = nullptr;
  std::string schema_section;
  if (!dataset_array && parts.size() == 2) {
    table = &section_table(root, parts[0], origin, origins);
    schema_section = parts[0];
  } else if (dataset_array && parts.size() == 4) {
    table = &dataset_table(root, parts[1], parts[2], origin);
    schema_section = "data.datasets";
  } else if (dataset_array) {
    LLMTRAIN_FAIL(origin, ": a dataset is addressed by its name: ", parts[0], ".", parts[1], ".NAME.key=value",
                  " (quote a name that has dots: ", parts[0], ".", parts[1], ".\"web.en\".weight=0.5)");
  } else {
    LLMTRAIN_FAIL(origin, ": ", kForms);
  }
  const std::string& leaf = parts.back();
  toml::table holder = typed_value(origin, value, holds_text(schema_section, leaf));
  if (const toml::node* replaced = table->get(leaf)) origins.erase(replaced);  // its memory is about to be freed
  const toml::node* node = &table->insert_or_assign(leaf, std::move(*holder.get("v"))).first->second;
  std::string written;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) written += (i ? "." : "") + as_key(parts[i]);
  origins[node] = {origin, written};
}

}  // namespace

void apply(toml::table& root, const std::vector<std::string>& overrides, Origins& origins) {
  for (const std::string& text : overrides) apply_one(root, text, origins);
}

}  // namespace llmtrain::config_overrides
