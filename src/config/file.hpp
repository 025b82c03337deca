// The filesystem side of the configuration (private to src/config): reading the TOML file without hanging
// or exhausting memory, and checking that the paths it names are of the kind a key expects.
//
// A FIFO or a device given as a configuration would block or never end (`llmtrain /dev/zero` used to hang),
// so only regular files are read, opened non-blocking and capped at kMaxConfigBytes.
#pragma once

#include <cstddef>
#include <string>

namespace llmtrain::config_file {

constexpr std::size_t kMaxConfigBytes = std::size_t{16} << 20;

// The whole text of the configuration file at `path`; throws llmtrain::Error naming the path and the
// problem (no such file, permission denied, a directory, a FIFO or device, larger than 16 MiB).
std::string read(const std::string& path);

// These follow symbolic links, as opening does; a path that does not resolve does not exist.
bool exists(const std::string& path);
bool is_file_or_directory(const std::string& path);
bool is_directory(const std::string& path);
// What the existing `path` is, for messages: "a regular file", "a directory", "a FIFO", "a character device"...
std::string kind_of(const std::string& path);

}  // namespace llmtrain::config_file
