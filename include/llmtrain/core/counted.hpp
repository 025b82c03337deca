// A count with its noun for messages: counted(1, "rank") == "1 rank", counted(8, "rank") == "8 ranks",
// counted(2, "batch", "batches") == "2 batches".
#pragma once

#include <string>

#include "llmtrain/core/error.hpp"

namespace llmtrain {

template <typename Count>
std::string counted(Count n, const std::string& noun, const std::string& nouns = "") {
  if (n == 1) return cat(n, " ", noun);
  return cat(n, " ", nouns.empty() ? noun + "s" : nouns);
}

}  // namespace llmtrain
