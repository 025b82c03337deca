// Which part of each unit a rank writes (see owned_ranges.hpp).
#include "owned_ranges.hpp"

#include <algorithm>

namespace llmtrain::ckpt {

std::vector<std::pair<std::int64_t, std::int64_t>> owned_ranges(const std::vector<model::ParamUnit<float>>& units,
                                                               MPI_Comm comm, int rank, int size) {
  const std::size_t n = units.size();
  std::vector<std::int64_t> mine, all(2 * n * std::size_t(size));
  for (const auto& unit : units) {
    mine.push_back(unit.begin);
    mine.push_back(std::min(unit.end(), unit.layout.size()));
  }
  MPI_Allgather(mine.data(), int(2 * n), MPI_INT64_T, all.data(), int(2 * n), MPI_INT64_T, comm);
  std::vector<std::pair<std::int64_t, std::int64_t>> owned;
  for (std::size_t u = 0; u < n; ++u) {
    const std::int64_t lo = mine[2 * u], hi = mine[2 * u + 1];
    int holders = 0, index = 0;
    for (int r = 0; r < size; ++r) {
      const bool same = all[(std::size_t(r) * n + u) * 2] == lo && all[(std::size_t(r) * n + u) * 2 + 1] == hi;
      holders += same ? 1 : 0;
      index += same && r < rank ? 1 : 0;
    }
    owned.push_back({lo + (hi - lo) * index / holders, lo + (hi - lo) * (index + 1) / holders});
  }
  return owned;
}

}  // namespace llmtrain::ckpt
