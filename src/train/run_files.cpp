// set_aside() and keep_steps_up_to(): see include/llmtrain/train/run_files.hpp.
#include "llmtrain/train/run_files.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "llmtrain/core/error.hpp"

namespace llmtrain::train {
namespace fs = std::filesystem;

std::string set_aside(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    LLMTRAIN_CHECK(errno == ENOENT, path, ": cannot read its status: ", std::strerror(errno));
    return "";
  }
  LLMTRAIN_CHECK(S_ISREG(info.st_mode), path, ": expected a regular file (an earlier run's log) to move aside");
  // An empty file logged nothing (a run that failed before its first step): no earlier run to keep.
  if (info.st_size == 0) return "";
  std::tm utc{};
  gmtime_r(&info.st_mtime, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
  const fs::path original(path);
  const std::string stem = (original.parent_path() / original.stem()).string() + "." + stamp;
  std::string target = stem + original.extension().string();
  for (int n = 2; fs::exists(target); ++n) target = cat(stem, "-", n, original.extension().string());
  std::error_code ec;
  fs::rename(original, target, ec);
  LLMTRAIN_CHECK(!ec, path, ": cannot move it aside to ", target, ": ", ec.message());
  return target;
}

KeptLines keep_steps_up_to(const std::string& path, std::int64_t step) {
  KeptLines result;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (status.type() == fs::file_type::not_found) return result;
  LLMTRAIN_CHECK(!ec && fs::is_regular_file(status), path, ": expected a regular file (the resumed run's log)");
  std::ifstream in(path);
  LLMTRAIN_CHECK(in.is_open(), path, ": cannot open it for reading");
  const std::string temporary = path + ".tmp";
  std::ofstream out(temporary, std::ios::trunc);
  LLMTRAIN_CHECK(out.is_open(), temporary, ": cannot open it for writing");
  std::string line;
  while (std::getline(in, line)) {
    // A line cut short by a killed run is not JSON: it belongs to no step and goes.
    const auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    const bool keep = j.is_object() && j.contains("step") && j["step"].is_number_integer() &&
                      j["step"].get<std::int64_t>() <= step;
    if (!keep) {
      ++result.dropped;
      continue;
    }
    out << line << '\n';
    ++result.kept;
  }
  out.close();
  LLMTRAIN_CHECK(out.good(), temporary, ": writing failed (disk full?)");
  fs::rename(temporary, path, ec);
  LLMTRAIN_CHECK(!ec, temporary, ": cannot rename it to ", path, ": ", ec.message());
  return result;
}

}  // namespace llmtrain::train
