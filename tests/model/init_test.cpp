// Keyed initialisation (model/init.hpp): the Philox generator against its published answers; a full
// init equals the same units assembled from 1/W slices for W = 1..5 (ragged last slices, padding left
// alone), tied and untied; values depend on (seed, tensor name, index) and nothing else; the normals have
// the right moments and tails and no correlation between neighbours, tensors or seeds.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <vector>

#include "llmtrain/core/error.hpp"
#include "llmtrain/core/hash.hpp"
#include "llmtrain/model/init.hpp"
#include "llmtrain/model/local_units.hpp"
#include "philox.hpp"

namespace llmtrain::model {
namespace {

// Odd sizes everywhere, so unit sizes are not multiples of 2..5 and slices cut tensors and Box-Muller
// pairs in the middle.
ModelConfig odd_config(bool tied) {
  ModelConfig c;
  c.vocab_size = 37;
  c.d_model = 12;
  c.n_layers = 3;
  c.n_heads = 3;
  c.n_kv_heads = 1;
  c.d_ff = 19;
  c.max_seq_len = 8;
  c.tie_embeddings = tied;
  return c;
}

template <typename T>
std::uint64_t hash_of(const T* data, std::int64_t n) {
  return hash_bytes(reinterpret_cast<const char*>(data), std::size_t(n) * sizeof(T));
}

// Hash of every tensor, "unit.tensor" -> hash, of buffers laid out like the units.
template <typename T>
std::map<std::string, std::uint64_t> tensor_hashes(const std::vector<UnitLayout>& units,
                                                   const std::vector<std::vector<T>>& flats) {
  std::map<std::string, std::uint64_t> out;
  for (std::size_t u = 0; u < units.size(); ++u)
    for (const auto& t : units[u].tensors) out[units[u].name + "." + t.name] = hash_of(flats[u].data() + t.offset, t.size());
  return out;
}

template <typename T>
std::vector<std::vector<T>> model_params(const ModelConfig& c) {
  LocalUnits<T> units(c);
  std::vector<std::vector<T>> flats;
  for (const auto& p : units.params()) {
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p.flat);
    flats.emplace_back(host.data(), host.data() + host.size());
  }
  return flats;
}

std::vector<double> unit_values(const ModelConfig& c, const UnitLayout& unit, std::int64_t begin, std::int64_t end) {
  std::vector<double> out(std::size_t(end - begin));
  init_unit_range(c, unit, begin, end, out.data());
  return out;
}

TEST(Philox, PublishedKnownAnswers) {
  // Random123's kat_vectors, "philox4x32 10": counter, key -> output.
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}), (PhiloxCounter{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox4x32_10({~0u, ~0u, ~0u, ~0u}, {~0u, ~0u}),
            (PhiloxCounter{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
            (PhiloxCounter{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

void check_slices_match_full_init(bool tied) {
  const ModelConfig c = odd_config(tied);
  const auto units = unit_layouts(c);
  const auto full = model_params<float>(c);
  const auto expected = tensor_hashes(units, full);
  EXPECT_EQ(expected.count("head.output"), tied ? 0u : 1u);
  bool ragged = false;
  for (std::int64_t world = 1; world <= 5; ++world) {
    std::vector<std::vector<float>> assembled;
    for (const auto& unit : units) {
      // A sharded store's layout: ceil(size / W) per rank, the last shard padded.
      const std::int64_t shard = (unit.size() + world - 1) / world;
      ragged = ragged || shard * world != unit.size();
      const float sentinel = -1234.5f;
      std::vector<float> padded(std::size_t(shard * world), sentinel);
      for (std::int64_t r = 0; r < world; ++r)
        init_unit_range(c, unit, r * shard, (r + 1) * shard, padded.data() + r * shard);
      for (std::int64_t i = unit.size(); i < shard * world; ++i)
        EXPECT_EQ(padded[std::size_t(i)], sentinel) << unit.name << " padding element " << i << ", W = " << world;
      padded.resize(std::size_t(unit.size()));
      assembled.push_back(padded);
    }
    EXPECT_EQ(tensor_hashes(units, assembled), expected) << "W = " << world;
  }
  EXPECT_TRUE(ragged) << "the config must give units whose size W does not divide";
}

TEST(KeyedInit, SlicesOfEveryUnitAssembleToTheFullInitTied) { check_slices_match_full_init(true); }
TEST(KeyedInit, SlicesOfEveryUnitAssembleToTheFullInitUntied) { check_slices_match_full_init(false); }

TEST(KeyedInit, ASliceDoesNotDependOnWhereItStarts) {
  const ModelConfig c = odd_config(false);
  const UnitLayout unit = unit_layouts(c)[1];  // block.0: nine tensors, norms and matrices
  const auto full = unit_values(c, unit, 0, unit.size());
  for (std::int64_t begin = 0; begin < unit.size(); begin += 7) {
    for (std::int64_t len : {1, 2, 3, 150, 1000}) {
      const std::int64_t end = std::min(unit.size(), begin + len);
      const auto part = unit_values(c, unit, begin, end);
      for (std::int64_t i = begin; i < end; ++i)
        ASSERT_EQ(part[std::size_t(i - begin)], full[std::size_t(i)]) << "slice [" << begin << ", " << end << ") at " << i;
    }
  }
}

TEST(KeyedInit, RepeatedCallsAreBitwiseIdenticalAndFloatIsDoubleRounded) {
  const ModelConfig c = odd_config(false);
  const auto first = model_params<float>(c), second = model_params<float>(c);
  const auto wide = model_params<double>(c);
  for (std::size_t u = 0; u < first.size(); ++u) {
    ASSERT_EQ(first[u].size(), second[u].size());
    EXPECT_EQ(std::memcmp(first[u].data(), second[u].data(), first[u].size() * sizeof(float)), 0) << "unit " << u;
    for (std::size_t i = 0; i < first[u].size(); ++i)
      ASSERT_EQ(first[u][i], static_cast<float>(wide[u][i])) << "unit " << u << " element " << i;
  }
}

TEST(KeyedInit, LlamaRules) {
  ModelConfig c = odd_config(false);
  c.d_model = 96;
  c.d_ff = 256;
  c.init_std = 0.5;
  c.n_layers = 8;
  const auto units = unit_layouts(c);
  const UnitLayout& block = units[2];
  const auto values = unit_values(c, block, 0, block.size());
  auto rms = [&](const char* name) {
    const auto& t = block.tensor(name);
    double s = 0;
    for (std::int64_t i = 0; i < t.size(); ++i) s += values[std::size_t(t.offset + i)] * values[std::size_t(t.offset + i)];
    return std::sqrt(s / double(t.size()));
  };
  for (const char* norm : {"attn_norm", "ffn_norm"}) EXPECT_EQ(rms(norm), 1.0) << norm;
  // ~25k elements each: the sample rms is within 2% of the target (over 4 standard errors).
  for (const char* matrix : {"w1", "w3"}) EXPECT_NEAR(rms(matrix), 0.5, 0.01) << matrix;
  EXPECT_NEAR(rms("w2"), 0.5 / 4.0, 0.0025);  // 1 / sqrt(2 * 8 layers)
  EXPECT_NEAR(rms("wo"), 0.5 / 4.0, 0.005);   // 9216 elements
  const auto head = unit_values(c, units.back(), 0, units.back().size());
  EXPECT_EQ(head[0], 1.0);  // final_norm
}

TEST(KeyedInit, SeedAndTensorNameChangeEveryValue) {
  ModelConfig a = odd_config(false), b = a;
  b.seed = a.seed + 1;
  const auto units = unit_layouts(a);
  const UnitLayout& block = units[1];
  const auto va = unit_values(a, block, 0, block.size()), vb = unit_values(b, block, 0, block.size());
  const auto other_block = unit_values(a, units[2], 0, units[2].size());  // same layout, other names
  std::int64_t matrix_elements = 0, same_seed = 0, same_name = 0;
  for (const auto& t : block.tensors) {
    for (std::int64_t i = t.offset; i < t.offset + t.size(); ++i) {
      const auto k = std::size_t(i);
      if (t.shape.size() == 1) {
        EXPECT_EQ(va[k], 1.0);
        EXPECT_EQ(vb[k], 1.0);
        continue;
      }
      ++matrix_elements;
      same_seed += va[k] == vb[k];
      same_name += va[k] == other_block[k];
    }
  }
  EXPECT_GT(matrix_elements, 1000);
  EXPECT_EQ(same_seed, 0);
  EXPECT_EQ(same_name, 0);
}

// 2^20 normals of one tensor with init_std = 1; bounds are 5 standard errors of each statistic.
struct Sample {
  std::vector<double> z;
  explicit Sample(const char* unit_name, std::int64_t seed = 1234) {
    ModelConfig c;
    c.init_std = 1.0;
    c.seed = seed;
    const UnitLayout unit{unit_name, {TensorSlice{"w1", 0, {1024, 1024}, false}}};
    z = unit_values(c, unit, 0, unit.size());
  }
  double n() const { return double(z.size()); }
  double mean_of(double (*f)(double)) const {
    double s = 0;
    for (double v : z) s += f(v);
    return s / n();
  }
  double fraction_beyond(double k) const {
    double count = 0;
    for (double v : z) count += std::abs(v) > k;
    return count / n();
  }
  // Pearson correlation of f(z[i]) and f(other[i + lag]).
  double correlation(const std::vector<double>& other, std::size_t lag, double (*f)(double)) const {
    double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
    const std::size_t m = z.size() - lag;
    for (std::size_t i = 0; i < m; ++i) {
      const double a = f(z[i]), b = f(other[i + lag]);
      sa += a, sb += b, saa += a * a, sbb += b * b, sab += a * b;
    }
    const double cov = sab / double(m) - sa * sb / double(m) / double(m);
    return cov / std::sqrt((saa / double(m) - sa * sa / double(m) / double(m)) * (sbb / double(m) - sb * sb / double(m) / double(m)));
  }
};

double identity(double v) { return v; }
double square(double v) { return v * v; }

TEST(KeyedInit, NormalsHaveTheMomentsAndTailsOfAStandardNormal) {
  const Sample s("block.0");
  const double se = 1.0 / std::sqrt(s.n());
  EXPECT_NEAR(s.mean_of(identity), 0.0, 5 * se);
  EXPECT_NEAR(s.mean_of(square), 1.0, 5 * std::sqrt(2.0) * se);
  EXPECT_NEAR(s.mean_of([](double v) { return v * v * v; }), 0.0, 5 * std::sqrt(15.0) * se);
  EXPECT_NEAR(s.mean_of([](double v) { return v * v * v * v; }), 3.0, 5 * std::sqrt(96.0) * se);
  // Two-sided tail probabilities of N(0, 1) at 1, 2, 3 and 4 standard deviations.
  for (auto [k, p] : {std::pair{1.0, 0.31731050786}, {2.0, 0.04550026390}, {3.0, 0.00269979606}, {4.0, 6.334e-5}})
    EXPECT_NEAR(s.fraction_beyond(k), p, 5 * std::sqrt(p * (1 - p)) * se) << "beyond " << k;
}

TEST(KeyedInit, NormalsAreUncorrelatedAcrossNeighboursTensorsAndSeeds) {
  const Sample s("block.0");
  const double bound = 5.0 / std::sqrt(s.n());
  // Lag 1 pairs the two outputs of one Box-Muller draw (and, at odd i, neighbouring draws); squares
  // catch a shared radius, which plain correlation does not.
  for (std::size_t lag : {1, 2, 3, 1024}) {
    EXPECT_NEAR(s.correlation(s.z, lag, identity), 0.0, bound) << "lag " << lag;
    EXPECT_NEAR(s.correlation(s.z, lag, square), 0.0, bound) << "squares, lag " << lag;
  }
  const Sample other_tensor("block.1"), other_seed("block.0", 1235);
  for (const Sample* o : {&other_tensor, &other_seed}) {
    EXPECT_NEAR(s.correlation(o->z, 0, identity), 0.0, bound);
    EXPECT_NEAR(s.correlation(o->z, 0, square), 0.0, bound);
  }
}

TEST(KeyedInit, BadRangeIsAnError) {
  const ModelConfig c = odd_config(true);
  const UnitLayout unit = unit_layouts(c)[0];
  std::vector<float> out(8);
  try {
    init_unit_range(c, unit, 5, 3, out.data());
    FAIL() << "expected llmtrain::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad range [5, 3) of unit 'embedding'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(init_unit_range(c, unit, -1, 3, out.data()), Error);
}

}  // namespace
}  // namespace llmtrain::model
