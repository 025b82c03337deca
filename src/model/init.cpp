// Keyed initialisation (init.hpp): the value of element i of tensor "unit.tensor" is computed from
// (seed, name, i) alone.
//
// Stream layout: Philox-4x32-10 keyed by the 64-bit seed, counter = (i / 2 as 64 bits, hash of the
// qualified tensor name as 64 bits). One block gives two 53-bit uniforms, and Box-Muller turns them into
// two independent normals: element i takes the cosine (even i) or sine (odd i) branch of block i / 2. A
// keyed bijection of counters means distinct (name hash, i / 2) never share a block, and Philox's output
// passes BigCrush, so the normals are as good as those of a sequential generator, without its sequence: a
// slice starting anywhere computes the same values. (A SplitMix64-style hash of (seed, name, i) would do
// the same job; Philox is the generator with the published statistical record and the one GPU libraries
// use, so a device-side initialiser could draw the same uniforms.)
#include "llmtrain/model/init.hpp"

#include <algorithm>
#include <cmath>

#include "llmtrain/core/error.hpp"
#include "llmtrain/core/hash.hpp"
#include "philox.hpp"

namespace llmtrain::model {
namespace {

// (0, 1) from the top 53 bits: never 0, so the logarithm is finite.
double open_unit(std::uint32_t lo, std::uint32_t hi) {
  const std::uint64_t bits = (std::uint64_t(hi) << 32 | lo) >> 11;
  return (double(bits) + 0.5) * 0x1p-53;
}

struct NormalPair {
  double z[2];
};

NormalPair normal_pair(PhiloxKey key, std::uint64_t name_hash, std::uint64_t block) {
  const PhiloxCounter r = philox4x32_10({std::uint32_t(block), std::uint32_t(block >> 32), std::uint32_t(name_hash),
                                         std::uint32_t(name_hash >> 32)},
                                        key);
  const double radius = std::sqrt(-2.0 * std::log(open_unit(r[0], r[1])));
  const double angle = 2.0 * M_PI * open_unit(r[2], r[3]);
  return {{radius * std::cos(angle), radius * std::sin(angle)}};
}

// Elements [lo, hi) of one tensor into out[0 .. hi - lo).
template <typename T>
void init_tensor_range(const ModelConfig& c, const std::string& unit_name, const TensorSlice& t, std::int64_t lo,
                       std::int64_t hi, T* out) {
  if (t.shape.size() == 1) {
    std::fill(out, out + (hi - lo), T(1));
    return;
  }
  const bool output_projection = t.name == "wo" || t.name == "w2";
  const double std = c.init_std / (output_projection ? std::sqrt(2.0 * double(c.n_layers)) : 1.0);
  const std::string qualified = unit_name + "." + t.name;
  const std::uint64_t name_hash = hash_bytes(qualified.data(), qualified.size());
  const auto seed = static_cast<std::uint64_t>(c.seed);
  const PhiloxKey key{std::uint32_t(seed), std::uint32_t(seed >> 32)};
  for (std::int64_t i = lo; i < hi;) {
    const NormalPair pair = normal_pair(key, name_hash, std::uint64_t(i / 2));
    const std::int64_t pair_end = std::min(hi, (i / 2 + 1) * 2);
    for (; i < pair_end; ++i) out[i - lo] = T(std * pair.z[i % 2]);
  }
}

}  // namespace

template <typename T>
void init_unit_range(const ModelConfig& config, const UnitLayout& unit, std::int64_t begin, std::int64_t end,
                     T* out) {
  LLMTRAIN_CHECK(0 <= begin && begin <= end, "init_unit_range: bad range [", begin, ", ", end, ") of unit '",
                 unit.name, "'");
  for (const auto& t : unit.tensors) {
    const std::int64_t lo = std::max(begin, t.offset), hi = std::min(end, t.offset + t.size());
    if (lo < hi) init_tensor_range(config, unit.name, t, lo - t.offset, hi - t.offset, out + (lo - begin));
  }
}

template void init_unit_range<float>(const ModelConfig&, const UnitLayout&, std::int64_t, std::int64_t, float*);
template void init_unit_range<double>(const ModelConfig&, const UnitLayout&, std::int64_t, std::int64_t, double*);

}  // namespace llmtrain::model
