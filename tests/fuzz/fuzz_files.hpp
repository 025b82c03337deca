// Helpers for fuzz targets whose parser reads files: the input goes to a fresh file in a private temporary
// directory (a fresh name per input, since the token-file reader caches maps by path and identity), removed
// again after the input; and one input can carry several files, cut at a separator line.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace llmtrain::fuzz {

namespace fs = std::filesystem;

// The process's own scratch directory, removed at exit.
inline const fs::path& scratch_dir() {
  struct Dir {
    fs::path path = fs::temp_directory_path() / ("llmtrain-fuzz-" + std::to_string(::getpid()));
    Dir() { fs::create_directories(path); }
    ~Dir() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  };
  static const Dir dir;
  return dir.path;
}

// A directory of its own for one input: scratch_dir()/<n>, removed by the destructor.
class InputDir {
 public:
  InputDir() : path_(scratch_dir() / std::to_string(counter()++)) { fs::create_directories(path_); }
  ~InputDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  InputDir(const InputDir&) = delete;
  InputDir& operator=(const InputDir&) = delete;

  // Writes `bytes` to <dir>/<name> and returns the path.
  std::string write(const std::string& name, std::string_view bytes) const {
    const fs::path file = path_ / name;
    std::ofstream out(file, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return file.string();
  }
  const fs::path& path() const { return path_; }

 private:
  static std::uint64_t& counter() {
    static std::uint64_t n = 0;
    return n;
  }
  fs::path path_;
};

// The input cut at each occurrence of `separator` (a line of its own in the seeds): always `parts` pieces,
// the missing ones empty, the last one holding the rest.
inline std::vector<std::string_view> split(std::string_view input, std::string_view separator, std::size_t parts) {
  std::vector<std::string_view> out;
  while (out.size() + 1 < parts) {
    const std::size_t at = input.find(separator);
    if (at == std::string_view::npos) break;
    out.push_back(input.substr(0, at));
    input.remove_prefix(at + separator.size());
  }
  out.push_back(input);
  out.resize(parts);
  return out;
}

}  // namespace llmtrain::fuzz
