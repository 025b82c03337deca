// The resolved configuration printed as TOML (to_toml): what `--dry-run` shows, what each checkpoint stores
// and what a resume compares. Every key is printed, defaults marked, so the text loads back to the same run.
#include <filesystem>
#include <sstream>

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

// "  # --set" after a value an override gave, "  # default" after one neither the file nor an override set.
std::string origin_mark(const Config& config, const std::string& key) {
  if (config.overrides.count(key)) return "  # --set";
  return config.source_lines.count(key) ? "" : "  # default";
}

// A relative path left in a Config is a default (e.g. train.run_dir), relative to the working directory;
// written into a file it would resolve against that file's directory, so it is printed absolute.
template <typename Target>
Value printable(const FieldSpec<Target>& spec, Value value) {
  const bool path = spec.kind == Kind::InputPath || spec.kind == Kind::InputGlob || spec.kind == Kind::OutputPath;
  auto* text = std::get_if<std::string>(&value);
  if (path && text && !text->empty() && fs::path(*text).is_relative())
    *text = fs::absolute(*text).lexically_normal().string();
  return value;
}

}  // namespace

std::string to_toml(const Config& config) {
  std::ostringstream out;
  for (const auto& [section, description] : schema::sections()) {
    out << "[" << section << "]\n";
    for (const auto& spec : schema::config_fields()) {
      if (spec.section != section) continue;
      out << spec.key << " = " << schema::value_to_toml(printable(spec, spec.get(config)))
          << origin_mark(config, spec.full_key()) << "\n";
    }
    out << "\n";
    if (section != "data") continue;
    for (const auto& [array, array_description] : schema::dataset_arrays()) {
      const auto& list = array == "data.datasets" ? config.data.datasets : config.data.eval_datasets;
      for (std::size_t i = 0; i < list.size(); ++i) {
        out << "[[" << array << "]]\n";
        for (const auto& spec : schema::dataset_fields())
          out << spec.key << " = " << schema::value_to_toml(printable(spec, spec.get(list[i])))
              << origin_mark(config, cat(array, "[", i, "].", spec.key)) << "\n";
        out << "\n";
      }
    }
  }
  return out.str();
}

}  // namespace llmtrain
