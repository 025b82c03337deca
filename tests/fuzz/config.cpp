// Fuzz target: arbitrary bytes as the TOML run configuration. Parsing must give a Config or llmtrain::Error
// (syntax, unknown key, type, range, missing file), never crash or throw anything else. Relative paths
// resolve against the repository's inputs/, so the seeds (inputs/*.toml) name files that exist and parse
// through. What parses must print back (to_toml) as TOML that parses to the same values: the two printed
// forms may differ only in the "# default" remarks (the first run defaulted keys the second one states).
#include <cstdint>
#include <cstdlib>
#include <regex>
#include <string>

#include "llmtrain/config/config.hpp"
#include "llmtrain/core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string base_dir = LLMTRAIN_SOURCE_DIR "/inputs";
  const std::string text(reinterpret_cast<const char*>(data), size);
  llmtrain::Config config;
  try {
    config = llmtrain::parse_config(text, "fuzz.toml", base_dir);
  } catch (const llmtrain::Error&) {
    return 0;
  }
  const std::string printed = llmtrain::to_toml(config);
  // Not caught: the printed form of a valid configuration must be valid.
  const llmtrain::Config again = llmtrain::parse_config(printed, "printed.toml", base_dir);
  static const std::regex remark("  # default\n");
  if (std::regex_replace(printed, remark, "\n") != llmtrain::to_toml(again)) std::abort();
  return 0;
}
