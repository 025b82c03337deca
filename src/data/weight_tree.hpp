// Weighted choice among n items in O(log n): the shard stream's pick of the next shard (shard_stream.hpp).
//
// A complete binary tree over the items' weights where every inner node holds the sum of its two children,
// recomputed from them (never updated by adding a difference). So every sum, and therefore every pick, is a
// pure function of the current weights: a tree built from saved cursors after a resume holds the same doubles
// as the one that was updated draw by draw. pick(u) walks down from the root, going left while u * total falls
// below the left sum: item i is picked with probability weight_i / total, and never an item of weight 0.
#pragma once

#include <cstddef>
#include <vector>

namespace llmtrain::data {

class WeightTree {
 public:
  // n items, all of weight 0.
  void reset(std::size_t n) {
    leaves_ = 1;
    while (leaves_ < n) leaves_ *= 2;
    sums_.assign(2 * leaves_, 0.0);
  }
  // Weights must be >= 0 (the caller's are document counts).
  void set(std::size_t item, double weight) {
    std::size_t node = leaves_ + item;
    sums_[node] = weight;
    for (node /= 2; node >= 1; node /= 2) sums_[node] = sums_[2 * node] + sums_[2 * node + 1];
  }
  double total() const { return sums_[1]; }
  // The item at `point` in [0, total()) of the weights laid end to end; total() must be > 0. A point that
  // rounding put at or past a node's end goes to its last item of positive weight.
  std::size_t pick(double point) const {
    std::size_t node = 1;
    while (node < leaves_) {
      const double left = sums_[2 * node], right = sums_[2 * node + 1];
      if (right <= 0 || (left > 0 && point < left)) {
        node = 2 * node;
      } else {
        point -= left;
        node = 2 * node + 1;
      }
    }
    return node - leaves_;
  }

 private:
  std::size_t leaves_ = 1;
  std::vector<double> sums_ = std::vector<double>(2, 0.0);  // sums_[1] is the root; leaves from sums_[leaves_]
};

}  // namespace llmtrain::data
