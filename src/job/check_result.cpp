// Gathering the ranks' check messages (see check_result.hpp).
#include "check_result.hpp"

#include "llmtrain/dist/gather_bytes.hpp"

namespace llmtrain::job {

std::map<std::string, std::vector<int>> gather_by_message(const dist::Runtime& runtime,
                                                          const std::vector<std::string>& messages) {
  std::string mine;
  for (const auto& m : messages) mine += m + "\n";
  const std::vector<std::string> per_rank = dist::all_gather_bytes(runtime, mine);
  std::map<std::string, std::vector<int>> out;
  for (std::size_t r = 0; r < per_rank.size(); ++r)
    for (std::size_t begin = 0, end; (end = per_rank[r].find('\n', begin)) != std::string::npos; begin = end + 1)
      out[per_rank[r].substr(begin, end - begin)].push_back(int(r));
  return out;
}

}  // namespace llmtrain::job
