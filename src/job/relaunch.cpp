// LLMTRAIN_RECOVERY, set by the job scripts on a relaunch (see relaunch.hpp).
#include "relaunch.hpp"

#include <cstdlib>
#include <string>

#include "llmtrain/core/error.hpp"

namespace llmtrain::job {

std::optional<Relaunch> parse_relaunch(const char* value) {
  if (!value || !*value) return std::nullopt;
  const std::string text = value;
  const auto fail = [&text] {
    LLMTRAIN_FAIL("LLMTRAIN_RECOVERY=", text, ": expected failed_at=<seconds since the epoch>,last_step=<step>");
  };
  Relaunch out;
  bool have_time = false, have_step = false;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos) fail();
    const std::string key = item.substr(0, eq), number = item.substr(eq + 1);
    char* end = nullptr;
    if (key == "failed_at") {
      out.failed_at_unix_s = std::strtod(number.c_str(), &end);
      have_time = !number.empty() && *end == '\0' && out.failed_at_unix_s > 0;
    } else if (key == "last_step") {
      out.last_step = std::strtoll(number.c_str(), &end, 10);
      have_step = !number.empty() && *end == '\0' && out.last_step >= 0;
    } else {
      fail();
    }
    at = comma + 1;
  }
  if (!have_time || !have_step) fail();
  return out;
}

}  // namespace llmtrain::job
