// The schema as Markdown (config_reference_markdown): docs/config.md is this text.
#include <algorithm>
#include <sstream>

#include "schema.hpp"
#include "toml_text.hpp"
#include "llmtrain/config/config.hpp"
#include "llmtrain/core/error.hpp"

namespace llmtrain {
using schema::Kind;

std::string config_reference_markdown() {
  std::ostringstream out;
  // The preamble: what a reader needs before the tables.
  out << R"md(# Configuration reference

<!-- Generated from the schema in src/config/schema_*.cpp by `llmtrain --config-reference`; a test checks that this file matches. -->

A run is configured by one TOML file. Relative paths written in the file are resolved against the
directory of that file; default paths stay relative to the working directory.

Unknown keys, wrong types, out-of-range values, missing files and conflicting settings are errors
that name the file, the line and the key. `llmtrain --dry-run FILE` prints the resolved
configuration with every default (default paths made absolute, so the printed file loads back to the
same run from any directory).

The file must be a regular file of at most 16 MiB. Input paths (`path`) must name files or
directories (a FIFO or a device is refused), output directories (`run_dir`, `dir`) directories if
they exist.

## Overrides: `--set section.key=value`

`llmtrain` and the `llmtrain-data` commands that read a configuration take `--set section.key=value`,
repeatable. Overrides are applied in order after the file is parsed and before anything is checked:
an override replaces the file's value, a later override replaces an earlier one, and the result is
exactly what a file with those values would give (same types, ranges, choices and conflict checks).
Errors name the override: `--set train.stepz=7: unknown key (did you mean train.steps?)`, and a
conflict with a key of the file names both (`... 0.001 is larger than train.lr = 0.0005 (--set
train.lr=0.0005)`). `--dry-run` marks overridden keys `# --set`.

- Values are typed by the schema, so quotes are optional: `--set parallel.backend=mpi`,
  `--set train.run_dir=runs/r`, `--set model.tie_embeddings=true`, `--set train.lr=3e-4`. A value
  that starts with a quote is read as a TOML string (`--set 'tokenizer.eos_token="</s>"'`).
- Relative paths in an override resolve against the current working directory (paths in the file
  against the file's directory).
- A dataset is addressed by its name: `--set data.datasets.web.weight=2`,
  `--set data.eval_datasets.held-out.path=eval.jsonl`. The key is TOML dotted-key syntax, so a name
  with a dot (or any character other than letters, digits, `_` and `-`) is quoted:
  `--set 'data.datasets."web.en".weight=0.5'`. An unknown name is an error listing the names.
  Overrides change existing datasets; they do not add or remove one.
)md";
  const auto row = [&out](const auto& spec) {
    std::string def = spec.required ? "required" : "`" + schema::value_to_toml(spec.default_value) + "`";
    std::string range;
    if (spec.kind == Kind::Integer)
      range = cat(static_cast<std::int64_t>(spec.min), " .. ", static_cast<std::int64_t>(spec.max));
    else if (spec.kind == Kind::Real)
      range = schema::real_to_toml(spec.min) + " .. " + schema::real_to_toml(spec.max);
    for (const auto& c : spec.choices) range += (range.empty() ? "" : ", ") + ("`" + c + "`");
    out << "| `" << spec.key << "` | " << schema::kind_name(spec.kind) << " | " << def << " | " << range << " | "
        << spec.help << " |\n";
  };
  const auto header = [&out] {
    out << "| key | type | default | range | meaning |\n|---|---|---|---|---|\n";
  };
  for (const auto& [section, description] : schema::sections()) {
    out << "\n## [" << section << "]\n\n" << description << "\n";
    const std::string& name = section;  // C++17 lambdas cannot capture a structured binding
    const bool has_keys = std::any_of(schema::config_fields().begin(), schema::config_fields().end(),
                                      [&name](const auto& spec) { return spec.section == name; });
    if (has_keys) {
      out << "\n";
      header();
    }
    for (const auto& spec : schema::config_fields())
      if (spec.section == section) row(spec);
    if (section != "data") continue;
    for (const auto& [array, array_description] : schema::dataset_arrays()) {
      out << "\n### [[" << array << "]]\n\n" << array_description << "\n\n";
      header();
      for (const auto& spec : schema::dataset_fields()) row(spec);
    }
  }
  return out.str();
}

}  // namespace llmtrain
