// The memory tier's directory and key (see memory_dir.hpp).
#include "memory_dir.hpp"

#include <cstdio>

#include "llmtrain/core/hash.hpp"
#include "resume.hpp"

namespace llmtrain::job {

std::uint64_t memory_key(const Config& config) {
  const std::string identity = config.checkpoint.dir + "\n" + fixed_settings(to_toml(config));
  return hash_bytes(identity.data(), identity.size());
}

std::string memory_dir(const Config& config) {
  if (!config.checkpoint.memory_dir.empty()) return config.checkpoint.memory_dir;
  char name[40];
  std::snprintf(name, sizeof name, "/dev/shm/llmtrain-%016llx", static_cast<unsigned long long>(memory_key(config)));
  return name;
}

}  // namespace llmtrain::job
