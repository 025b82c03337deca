// All-gather of byte strings of any size (see gather_bytes.hpp).
#include "llmtrain/dist/gather_bytes.hpp"

#include <climits>

#include "llmtrain/core/error.hpp"

namespace llmtrain::dist {

std::vector<std::string> all_gather_bytes(const Runtime& runtime, const std::string& mine) {
  LLMTRAIN_CHECK(mine.size() <= std::size_t(INT_MAX), "all_gather_bytes: ", mine.size(), " bytes exceed an MPI count");
  const int n = runtime.size();
  int size = int(mine.size());
  std::vector<int> sizes(n), offsets(n);
  LLMTRAIN_MPI_CHECK(MPI_Allgather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, runtime.comm()));
  long long total = 0;
  for (int r = 0; r < n; ++r) {
    LLMTRAIN_CHECK(total + sizes[r] <= INT_MAX, "all_gather_bytes: more than ", INT_MAX, " bytes in total");
    offsets[r] = int(total);
    total += sizes[r];
  }
  std::string all(std::size_t(total), '\0');
  LLMTRAIN_MPI_CHECK(MPI_Allgatherv(mine.data(), size, MPI_BYTE, all.data(), sizes.data(), offsets.data(), MPI_BYTE,
                                    runtime.comm()));
  std::vector<std::string> out;
  for (int r = 0; r < n; ++r) out.push_back(all.substr(std::size_t(offsets[r]), std::size_t(sizes[r])));
  return out;
}

}  // namespace llmtrain::dist
