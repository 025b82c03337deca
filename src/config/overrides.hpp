// `--set section.key=value` overrides (private to src/config). They are written into the TOML tree of the file
// after it is parsed and before it is read, so an override goes through exactly the checks a line of the
// file would (types, ranges, choices, unknown keys, conflicts) and the result is what a file with that value
// would give. Origins remembers which nodes came from an override, so that messages name the override
// instead of a line and paths in it resolve against the working directory.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <toml++/toml.h>

namespace llmtrain::config_overrides {

// Where a node the override put into the tree came from.
struct Origin {
  std::string text;   // the override as the user wrote it: "--set data.datasets.kjv.weight=2"
  std::string table;  // the table it addresses, as written: "data.datasets.kjv" (for "did you mean" hints)
};
using Origins = std::map<const toml::node*, Origin>;

// Applies `overrides` ("section.key=value" or "data.datasets.NAME.key=value") in order, so a later one
// replaces an earlier one and both replace the file. Throws llmtrain::Error naming the override when it is
// malformed or names a dataset the file does not have.
void apply(toml::table& root, const std::vector<std::string>& overrides, Origins& origins);

}  // namespace llmtrain::config_overrides
