// Attention's tile products in the model's precision: a float Attention in Bf16 rounds the operands of its
// score and value products (so its error against a double reference is that of bf16, well above fp32's and
// well below what a wrong product would give), is deterministic, and leaves the fp32 path as it was.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <tuple>
#include <vector>

#include "attention.hpp"
#include "llmtrain/core/error.hpp"

namespace llmtrain::model {
namespace {

// batch 2, 300 positions (three 128-tiles, the last partial), 4 query heads over 2 KV heads, head_dim 64.
const AttentionShape kShape{2, 300, 4, 2, 64, 128};

struct Result {
  std::vector<double> out, dqkv;
};

template <typename T>
Result run(Precision precision, const std::vector<double>& qkv_in, const std::vector<double>& dout_in,
           const std::int32_t* doc) {
  const std::vector<T> qkv(qkv_in.begin(), qkv_in.end()), dout(dout_in.begin(), dout_in.end());
  std::vector<T> out(dout.size()), lse(std::size_t(kShape.batch * kShape.n_heads * kShape.seq_len)),
      dqkv(qkv.size());
  Attention<T> attention(kShape, precision);
  attention.forward(out.data(), lse.data(), qkv.data(), doc);
  attention.backward(dqkv.data(), dout.data(), out.data(), lse.data(), qkv.data(), doc);
  return {std::vector<double>(out.begin(), out.end()), std::vector<double>(dqkv.begin(), dqkv.end())};
}

// Largest |x - ref| relative to the largest |ref|.
double relative_error(const std::vector<double>& x, const std::vector<double>& ref) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    diff = std::max(diff, std::abs(x[i] - ref[i]));
    scale = std::max(scale, std::abs(ref[i]));
  }
  return diff / scale;
}

class AttentionPrecision : public ::testing::TestWithParam<bool> {};  // with document masks or not

TEST_P(AttentionPrecision, Bf16ProductsHaveBf16ErrorAndAreDeterministic) {
  const std::int64_t n = kShape.batch * kShape.seq_len;
  std::mt19937 rng(7);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> qkv(std::size_t(n * kShape.width())), dout(std::size_t(n * kShape.n_heads * kShape.head_dim));
  for (double& x : qkv) x = normal(rng);
  for (double& x : dout) x = normal(rng);
  std::vector<std::int32_t> doc(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) doc[std::size_t(i)] = std::int32_t((i % kShape.seq_len) / 70);
  const std::int32_t* docs = GetParam() ? doc.data() : nullptr;

  const Result exact = run<double>(Precision::Fp32, qkv, dout, docs);
  const Result fp32 = run<float>(Precision::Fp32, qkv, dout, docs);
  const Result bf16 = run<float>(Precision::Bf16, qkv, dout, docs);
  // fp32 products: float rounding only. bf16 (8-bit mantissas, relative step 2^-8): clearly coarser, yet
  // within a few units of it; a product that ignored the precision would land in fp32's band, a wrong one
  // far above.
  EXPECT_LT(relative_error(fp32.out, exact.out), 1e-5);
  EXPECT_LT(relative_error(fp32.dqkv, exact.dqkv), 1e-5);
  for (const auto& [x, ref, what] : {std::make_tuple(&bf16.out, &exact.out, "out"),
                                     std::make_tuple(&bf16.dqkv, &exact.dqkv, "dqkv")}) {
    const double error = relative_error(*x, *ref);
    EXPECT_GT(error, 1e-4) << what;
    EXPECT_LT(error, 1e-2) << what;
  }
  const Result again = run<float>(Precision::Bf16, qkv, dout, docs);
  EXPECT_EQ(again.out, bf16.out);
  EXPECT_EQ(again.dqkv, bf16.dqkv);
}

INSTANTIATE_TEST_SUITE_P(Masks, AttentionPrecision, ::testing::Values(false, true));

TEST(AttentionPrecisionDouble, Bf16IsRefusedForDouble) {
  EXPECT_THROW(Attention<double>(kShape, Precision::Bf16), Error);
  EXPECT_NO_THROW(Attention<double>(kShape, Precision::Fp32));
}

}  // namespace
}  // namespace llmtrain::model
