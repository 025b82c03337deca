// What one rank's checks found: problems (fatal), warnings (the run goes on, worse off) and notes
// (informative). The preflight prints them all; a run's start-up checks fail on the problems and log the
// warnings.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "llmtrain/dist/runtime.hpp"

namespace llmtrain::job {

struct CheckResult {
  std::vector<std::string> problems;
  std::vector<std::string> warnings;
  std::vector<std::string> notes;
};

// Collective: every rank's one-line messages, each with the ranks that reported it (in rank order), so
// that a message many ranks share is reported once.
std::map<std::string, std::vector<int>> gather_by_message(const dist::Runtime& runtime,
                                                          const std::vector<std::string>& messages);

}  // namespace llmtrain::job
