// Next-token choice (sampling.hpp): greedy is the first maximum; a draw is a pure function of (seed, stream,
// position); its frequencies follow softmax(logits / T) within the top_p nucleus; ids past `vocab` (padding)
// never come out; out-of-range options are refused naming their flag. Every count below comes from fixed
// seeds, so the test is deterministic; the frequency bounds (3 standard deviations at 20000 draws: 0.011)
// hold for these seeds and would fail for a draw that ignored the temperature or the cut.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "llmtrain/core/error.hpp"
#include "llmtrain/model/sampling.hpp"

namespace llmtrain::model {
namespace {

std::vector<double> frequencies(const std::vector<float>& logits, std::int64_t vocab, const SamplingOptions& o) {
  std::vector<double> count(logits.size(), 0.0);
  constexpr int kDraws = 20000;
  for (int i = 0; i < kDraws; ++i) count[std::size_t(next_token(logits.data(), vocab, o, 3, std::uint64_t(i)))] += 1;
  for (double& c : count) c /= kDraws;
  return count;
}

TEST(Sampling, GreedyTakesTheFirstMaximum) {
  const std::vector<float> logits = {0.5f, 2.0f, -1.0f, 2.0f};
  EXPECT_EQ(next_token(logits.data(), 4, {}, 0, 0), 1);
  EXPECT_EQ(next_token(logits.data(), 1, {}, 0, 0), 0);  // only id 0 is in the vocabulary
}

TEST(Sampling, FollowsTheTemperatureAndTheNucleus) {
  const std::vector<float> logits = {std::log(0.5f), std::log(0.3f), std::log(0.2f), 9.0f};  // id 3: padding
  SamplingOptions o;
  o.temperature = 1;
  o.seed = 11;
  auto f = frequencies(logits, 3, o);
  EXPECT_NEAR(f[0], 0.5, 0.011);
  EXPECT_NEAR(f[1], 0.3, 0.011);
  EXPECT_NEAR(f[2], 0.2, 0.011);
  EXPECT_EQ(f[3], 0.0);
  o.temperature = 0.5;  // probabilities squared, renormalised: 25/38, 9/38, 4/38
  f = frequencies(logits, 3, o);
  EXPECT_NEAR(f[0], 25.0 / 38, 0.011);
  EXPECT_NEAR(f[2], 4.0 / 38, 0.011);
  o.temperature = 1;
  o.top_p = 0.6;  // 0.5 < 0.6, 0.5 + 0.3 reaches it: ids 0 and 1, renormalised
  f = frequencies(logits, 3, o);
  EXPECT_NEAR(f[0], 0.5 / 0.8, 0.011);
  EXPECT_NEAR(f[1], 0.3 / 0.8, 0.011);
  EXPECT_EQ(f[2], 0.0);
  o.top_p = 1e-9;  // the nucleus is the most likely token alone
  EXPECT_EQ(frequencies(logits, 3, o)[0], 1.0);
}

TEST(Sampling, ADrawIsAFunctionOfSeedStreamAndPosition) {
  std::vector<float> logits(50);
  for (std::size_t i = 0; i < logits.size(); ++i) logits[i] = float(i % 7) * 0.1f;
  SamplingOptions a, b;
  a.temperature = b.temperature = 1;
  a.seed = 1;
  b.seed = 2;
  int same_seed_differs = 0, other_seed_differs = 0, other_stream_differs = 0;
  for (std::uint64_t p = 0; p < 200; ++p) {
    const TokenId x = next_token(logits.data(), 50, a, 0, p);
    same_seed_differs += x != next_token(logits.data(), 50, a, 0, p);
    other_seed_differs += x != next_token(logits.data(), 50, b, 0, p);
    other_stream_differs += x != next_token(logits.data(), 50, a, 1, p);
  }
  EXPECT_EQ(same_seed_differs, 0);
  EXPECT_GT(other_seed_differs, 150);  // 49/50 of independent draws differ
  EXPECT_GT(other_stream_differs, 150);
}

TEST(Sampling, RefusesOptionsOutOfRange) {
  auto refused = [](double temperature, double top_p, const char* expected) {
    SamplingOptions o;
    o.temperature = temperature;
    o.top_p = top_p;
    try {
      validate(o);
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
      return;
    }
    ADD_FAILURE() << "accepted temperature " << temperature << ", top_p " << top_p;
  };
  refused(-0.1, 1, "--temperature must be >= 0, got -0.1");
  refused(NAN, 1, "--temperature must be >= 0");
  refused(1, 0, "--top-p must lie in (0, 1], got 0");
  refused(1, 1.5, "--top-p must lie in (0, 1], got 1.5");
  SamplingOptions fine;
  fine.temperature = 0.7;
  fine.top_p = 1;
  EXPECT_NO_THROW(validate(fine));
}

}  // namespace
}  // namespace llmtrain::model
