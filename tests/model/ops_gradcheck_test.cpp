// Finite-difference checks (double precision) of every kernel's backward pass against its forward pass.
// Each op's scalar loss is sum(out * R) for a fixed random R, so its output gradient is R.
#include <gtest/gtest.h>

#include <numeric>

#include "attention.hpp"
#include "gradcheck.hpp"
#include "ops.hpp"

namespace llmtrain::model {
namespace {

using llmtrain::testing::expect_gradient;
using llmtrain::testing::random_vector;

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  return std::inner_product(a.begin(), a.end(), b.begin(), 0.0);
}

TEST(OpsGradcheck, RmsNorm) {
  const std::int64_t rows = 3, dim = 7;
  auto x = random_vector(rows * dim, 1), w = random_vector(dim, 2), r = random_vector(rows * dim, 3);
  std::vector<double> out(rows * dim), rstd(rows);
  auto loss = [&] {
    ops::rmsnorm_forward(out.data(), rstd.data(), x.data(), w.data(), rows, dim, 1e-5);
    return dot(out, r);
  };
  loss();
  std::vector<double> dx(rows * dim, 0.0), dw(dim, 0.0);
  ops::rmsnorm_backward(dx.data(), dw.data(), r.data(), x.data(), w.data(), rstd.data(), rows, dim);
  expect_gradient("rmsnorm dx", x.data(), x.size(), loss, dx);
  expect_gradient("rmsnorm dw", w.data(), w.size(), loss, dw);
}

TEST(OpsGradcheck, Rope) {
  const std::int64_t rows = 6, seq = 3, heads = 3, hd = 4, width = heads * hd + 5;  // extra columns untouched
  auto x = random_vector(rows * width, 4), r = random_vector(rows * width, 5);
  std::vector<double> cosv(seq * hd / 2), sinv(seq * hd / 2);
  for (std::size_t i = 0; i < cosv.size(); ++i) {
    cosv[i] = std::cos(0.3 * double(i + 1));
    sinv[i] = std::sin(0.3 * double(i + 1));
  }
  auto loss = [&] {
    auto y = x;
    ops::rope_apply(y.data(), cosv.data(), sinv.data(), rows, seq, width, heads, hd, +1);
    return dot(y, r);
  };
  auto dx = r;
  ops::rope_apply(dx.data(), cosv.data(), sinv.data(), rows, seq, width, heads, hd, -1);
  expect_gradient("rope dx", x.data(), x.size(), loss, dx);
}

TEST(OpsGradcheck, SwiGlu) {
  const std::int64_t rows = 4, hidden = 5;
  auto h = random_vector(rows * 2 * hidden, 6), r = random_vector(rows * hidden, 7);
  std::vector<double> out(rows * hidden), dh(rows * 2 * hidden);
  auto loss = [&] {
    ops::swiglu_forward(out.data(), h.data(), rows, hidden);
    return dot(out, r);
  };
  ops::swiglu_backward(dh.data(), r.data(), h.data(), rows, hidden);
  expect_gradient("swiglu", h.data(), h.size(), loss, dh);
}

TEST(OpsGradcheck, CrossEntropyWithIgnoredTarget) {
  const std::int64_t rows = 3, vocab = 6;
  auto z = random_vector(rows * vocab, 8);
  const std::vector<std::int32_t> targets = {2, -1, 5};
  std::vector<double> loss_rows(rows);
  auto loss = [&] {
    auto work = z;
    ops::cross_entropy_rows(work.data(), loss_rows.data(), targets.data(), rows, vocab, -1, 1.0, false);
    return std::accumulate(loss_rows.begin(), loss_rows.end(), 0.0);
  };
  auto grad = z;
  ops::cross_entropy_rows(grad.data(), loss_rows.data(), targets.data(), rows, vocab, -1, 1.0, true);
  EXPECT_EQ(loss_rows[1], 0.0);
  expect_gradient("cross entropy", z.data(), z.size(), loss, grad);
}

TEST(OpsGradcheck, EmbeddingRepeatedTokens) {
  const std::int64_t vocab = 5, dim = 3, rows = 4;
  auto table = random_vector(vocab * dim, 9), r = random_vector(rows * dim, 10);
  const std::vector<std::int32_t> tokens = {1, 3, 1, 0};
  std::vector<double> out(rows * dim), grad(vocab * dim, 0.0);
  auto loss = [&] {
    ops::embedding_forward(out.data(), table.data(), tokens.data(), rows, dim);
    return dot(out, r);
  };
  ops::embedding_backward(grad.data(), r.data(), tokens.data(), rows, dim);
  expect_gradient("embedding", table.data(), table.size(), loss, grad);
}

// Grouped-query attention over several query and key tiles, with and without document masking.
void check_attention(bool with_docs) {
  AttentionShape shape{2, 10, 4, 2, 4, 4};  // batch, seq, heads, kv heads, head dim, tile (3 tiles)
  const std::int64_t n = shape.batch * shape.seq_len;
  auto qkv = random_vector(n * shape.width(), 11);
  auto r = random_vector(n * shape.n_heads * shape.head_dim, 12);
  std::vector<std::int32_t> doc(n);
  for (std::int64_t i = 0; i < n; ++i) doc[i] = with_docs ? std::int32_t((i % shape.seq_len) / 4) : 0;
  const std::int32_t* docs = with_docs ? doc.data() : nullptr;
  Attention<double> attention(shape);
  std::vector<double> out(r.size()), lse(shape.batch * shape.n_heads * shape.seq_len);
  auto loss = [&] {
    attention.forward(out.data(), lse.data(), qkv.data(), docs);
    return dot(out, r);
  };
  loss();
  std::vector<double> dqkv(qkv.size());
  attention.backward(dqkv.data(), r.data(), out.data(), lse.data(), qkv.data(), docs);
  expect_gradient(with_docs ? "attention (documents)" : "attention", qkv.data(), qkv.size(), loss, dqkv);
}

TEST(OpsGradcheck, AttentionCausalTiled) { check_attention(false); }
TEST(OpsGradcheck, AttentionDocumentMasked) { check_attention(true); }

// A query that sees only itself (first token of a document) must attend fully to its own value.
TEST(OpsGradcheck, AttentionFirstTokenOfDocumentCopiesItsValue) {
  AttentionShape shape{1, 5, 1, 1, 2, 2};
  auto qkv = random_vector(5 * shape.width(), 13);
  const std::vector<std::int32_t> doc = {0, 0, 1, 1, 1};
  Attention<double> attention(shape);
  std::vector<double> out(5 * 2), lse(5);
  attention.forward(out.data(), lse.data(), qkv.data(), doc.data());
  for (int t : {0, 2}) {
    EXPECT_NEAR(out[t * 2 + 0], qkv[t * shape.width() + 4], 1e-12);
    EXPECT_NEAR(out[t * 2 + 1], qkv[t * shape.width() + 5], 1e-12);
  }
}

}  // namespace
}  // namespace llmtrain::model
