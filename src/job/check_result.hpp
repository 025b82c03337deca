// What one rank's checks found: problems (fatal), warnings (the run goes on, worse off) and notes
// (informative). The preflight prints them all; a run's start-up checks fail on the problems and log the
// warnings.
#pragma once

#include <string>
#include <vector>

namespace llmtrain::job {

struct CheckResult {
  std::vector<std::string> problems;
  std::vector<std::string> warnings;
  std::vector<std::string> notes;
};

}  // namespace llmtrain::job
