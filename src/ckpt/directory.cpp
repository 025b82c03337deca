// Checkpoint files in a directory: naming, listing, LATEST and retention (see directory.hpp).
#include "llmtrain/ckpt/directory.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>

#include "llmtrain/core/error.hpp"

namespace llmtrain::ckpt {
namespace fs = std::filesystem;

std::string checkpoint_path(const std::string& dir, std::int64_t step) {
  char name[40];
  std::snprintf(name, sizeof name, "step_%08lld.h5", static_cast<long long>(step));
  return (fs::path(dir) / name).string();
}

namespace {

// Files named like checkpoints (or their .tmp), with their steps.
std::vector<Entry> list_matching(const std::string& dir, bool tmp) {
  static const std::regex complete(R"(step_(\d{8,})\.h5)"), partial(R"(step_(\d{8,})\.h5\.tmp)");
  std::vector<Entry> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::smatch m;
    const std::string name = e.path().filename().string();
    if (e.is_regular_file(ec) && std::regex_match(name, m, tmp ? partial : complete))
      out.push_back({std::stoll(m[1].str()), e.path().string()});
  }
  LLMTRAIN_CHECK(!ec, dir, ": cannot list the checkpoint directory: ", ec.message());
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) { return a.step < b.step; });
  return out;
}

}  // namespace

std::vector<Entry> list_checkpoints(const std::string& dir) { return list_matching(dir, false); }

void write_latest(const std::string& dir, const std::string& path) {
  const fs::path latest = fs::path(dir) / "LATEST", tmp = fs::path(dir) / "LATEST.tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << fs::path(path).filename().string() << '\n';
    out.flush();
    LLMTRAIN_CHECK(out.good(), tmp.string(), ": cannot write");
  }
  const int fd = ::open(tmp.c_str(), O_RDONLY);
  LLMTRAIN_CHECK(fd >= 0 && ::fsync(fd) == 0, tmp.string(), ": cannot sync");
  ::close(fd);
  std::error_code ec;
  fs::rename(tmp, latest, ec);
  LLMTRAIN_CHECK(!ec, latest.string(), ": cannot update: ", ec.message());
}

std::vector<std::string> prune(const std::string& dir, std::int64_t keep_last, std::int64_t keep_every) {
  const auto all = list_checkpoints(dir);
  std::vector<std::string> removed;
  std::error_code ec;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const bool recent = keep_last <= 0 || all.size() - i <= std::size_t(keep_last);
    const bool milestone = keep_every > 0 && all[i].step % keep_every == 0;
    if (recent || milestone) continue;
    if (fs::remove(all[i].path, ec)) removed.push_back(all[i].path);
  }
  if (!all.empty())
    for (const auto& t : list_matching(dir, true))
      if (t.step < all.back().step && fs::remove(t.path, ec)) removed.push_back(t.path);
  return removed;
}

}  // namespace llmtrain::ckpt
