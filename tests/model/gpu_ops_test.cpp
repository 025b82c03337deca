// Every operation of src/model/cuda/device_ops.hpp against its host twin (ops.hpp, gemm()) on the same random
// inputs. fp32: per output tensor, max |device - host| <= 1e-5 max |host| (the device reduces rows in other
// fixed orders, so only rounding may differ); the gather, the scatter-add of the embedding (one chain per
// element in row order on both sides) and copy / scale / fill must match bitwise. bf16 products: per element
// |device - host| <= thr + 0.079 |host| with thr = 1e-3 max |host|, and within fp32 accumulation error of the
// bf16-rounded operands' exact product. Shapes are odd (not multiples of any block or warp), cross-entropy
// has ignored rows, the embedding repeated tokens. Every device operation runs twice from the same inputs and
// must repeat bitwise (fixed reduction orders, no atomics). Needs a CUDA device: exits 77 (skipped) without.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../device_buffer.hpp"
#include "../random_floats.hpp"
#include "cuda/compute_stream.hpp"
#include "cuda/device_ops.hpp"
#include "llmtrain/core/bf16.hpp"
#include "llmtrain/model/gemm.hpp"
#include "ops.hpp"

namespace llmtrain::model {
namespace {

using Floats = std::vector<float>;
using testing::DeviceBuffer;
using testing::random_floats;

constexpr std::int32_t kIgnore = -100;

cudaStream_t stream() { return cuda::compute_stream(); }

void expect_close(const std::string& what, const Floats& device, const Floats& host, double relative = 1e-5) {
  ASSERT_EQ(device.size(), host.size()) << what;
  double worst = 0, largest = 0;
  for (std::size_t i = 0; i < host.size(); ++i) {
    worst = std::max(worst, std::abs(double(device[i]) - double(host[i])));
    largest = std::max(largest, std::abs(double(host[i])));
  }
  EXPECT_GT(largest, 0.0) << what << ": the host output is all zeros, the comparison would prove nothing";
  EXPECT_LE(worst, relative * largest) << what << ": max |device - host| " << worst << ", max |host| " << largest;
}

void expect_same_bits(const std::string& what, const Floats& a, const Floats& b) {
  ASSERT_EQ(a.size(), b.size()) << what;
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << what << ": the bits differ";
}

// Runs `op` on device copies of `tensors` (it reads and writes them in place) twice, each time from the
// given values, requires both runs to give the same bits, and returns the tensors after the first run.
std::vector<Floats> run_twice(const std::string& what, const std::vector<Floats>& tensors,
                              const std::function<void(std::vector<float*>&)>& op) {
  std::vector<std::vector<Floats>> runs;
  for (int run = 0; run < 2; ++run) {
    std::vector<std::unique_ptr<DeviceBuffer<float>>> buffers;
    std::vector<float*> pointers;
    for (const Floats& t : tensors) {
      buffers.push_back(std::make_unique<DeviceBuffer<float>>(t));
      pointers.push_back(buffers.back()->get());
    }
    op(pointers);
    runs.emplace_back();
    for (const auto& b : buffers) runs.back().push_back(b->read());
  }
  for (std::size_t t = 0; t < tensors.size(); ++t)
    expect_same_bits(what + ", repeated run, tensor " + std::to_string(t), runs[0][t], runs[1][t]);
  return runs[0];
}

std::vector<std::int32_t> tokens_with_repeats(std::int64_t rows, std::int32_t vocab) {
  std::vector<std::int32_t> tokens(static_cast<std::size_t>(rows));
  for (std::int64_t r = 0; r < rows; ++r) tokens[std::size_t(r)] = std::int32_t((r * 7919 + r / 3) % vocab);
  return tokens;
}

TEST(GpuOps, EmbeddingForwardGathersRows) {
  const std::int64_t rows = 517, dim = 771;
  const std::int32_t vocab = 97;
  const auto tokens = tokens_with_repeats(rows, vocab);
  DeviceBuffer<std::int32_t> d_tokens(tokens);
  const Floats table = random_floats(std::size_t(vocab * dim), 1, 1.0f);
  Floats host(std::size_t(rows * dim));
  ops::embedding_forward(host.data(), table.data(), tokens.data(), rows, dim);
  const auto dev = run_twice("embedding_forward", {Floats(host.size()), table}, [&](std::vector<float*>& t) {
    cuda::embedding_forward(t[0], t[1], d_tokens.get(), rows, dim, stream());
  });
  expect_same_bits("embedding_forward", dev[0], host);
}

TEST(GpuOps, EmbeddingBackwardAddsRepeatedTokensInRowOrder) {
  const std::int64_t rows = 1029, dim = 771;  // 97 tokens over 1029 rows: each repeats ~10 times
  const std::int32_t vocab = 97;
  const auto tokens = tokens_with_repeats(rows, vocab);
  DeviceBuffer<std::int32_t> d_tokens(tokens);
  const Floats dtable0 = random_floats(std::size_t(vocab * dim), 2, 1.0f);
  const Floats dout = random_floats(std::size_t(rows * dim), 3, 1.0f);
  Floats host = dtable0;
  ops::embedding_backward(host.data(), dout.data(), tokens.data(), rows, dim);
  const auto dev = run_twice("embedding_backward", {dtable0, dout}, [&](std::vector<float*>& t) {
    cuda::embedding_backward(t[0], t[1], d_tokens.get(), rows, dim, stream());
  });
  expect_close("embedding_backward", dev[0], host);
  expect_same_bits("embedding_backward (each element adds its rows in row order, as the host)", dev[0], host);
}

TEST(GpuOps, RmsNormForwardAndBackward) {
  for (const std::int64_t dim : {std::int64_t(771), std::int64_t(2053)}) {
    SCOPED_TRACE(::testing::Message() << "dim " << dim);
    const std::int64_t rows = 37;
    const Floats x = random_floats(std::size_t(rows * dim), 4, 2.0f), w = random_floats(std::size_t(dim), 5, 1.0f);
    const Floats dout = random_floats(std::size_t(rows * dim), 6, 1.0f);
    const Floats dx0 = random_floats(std::size_t(rows * dim), 7, 1.0f), dw0 = random_floats(std::size_t(dim), 8, 1.0f);
    Floats out(std::size_t(rows * dim)), rstd(static_cast<std::size_t>(rows)), dx = dx0, dw = dw0;
    ops::rmsnorm_forward(out.data(), rstd.data(), x.data(), w.data(), rows, dim, 1e-5);
    ops::rmsnorm_backward(dx.data(), dw.data(), dout.data(), x.data(), w.data(), rstd.data(), rows, dim);
    const auto fwd = run_twice("rmsnorm_forward", {Floats(out.size()), Floats(rstd.size()), x, w},
                               [&](std::vector<float*>& t) {
                                 cuda::rmsnorm_forward(t[0], t[1], t[2], t[3], rows, dim, 1e-5, stream());
                               });
    expect_close("rmsnorm_forward out", fwd[0], out);
    expect_close("rmsnorm_forward rstd", fwd[1], rstd);
    // The backward pass from the host's rstd, so that it is checked on its own.
    const auto bwd = run_twice("rmsnorm_backward", {dx0, dw0, dout, x, w, rstd}, [&](std::vector<float*>& t) {
      cuda::rmsnorm_backward(t[0], t[1], t[2], t[3], t[4], t[5], rows, dim, stream());
    });
    expect_close("rmsnorm_backward dx", bwd[0], dx);
    expect_close("rmsnorm_backward dw", bwd[1], dw);
  }
}

TEST(GpuOps, RopeBothDirections) {
  // 45 rows of sequences of 11 positions; 4 of 7 heads rotated; head_dim 62 (half 31, odd).
  const std::int64_t rows = 45, seq = 11, hd = 62, half = hd / 2, heads = 4, width = 7 * hd;
  const Floats qk = random_floats(std::size_t(rows * width), 9, 1.0f);
  Floats cos_table(std::size_t(seq * half)), sin_table(std::size_t(seq * half));
  for (std::int64_t pos = 0; pos < seq; ++pos)
    for (std::int64_t k = 0; k < half; ++k) {
      const float angle = float(pos) * std::pow(0.8f, float(k));
      cos_table[std::size_t(pos * half + k)] = std::cos(angle);
      sin_table[std::size_t(pos * half + k)] = std::sin(angle);
    }
  for (const int direction : {+1, -1}) {
    SCOPED_TRACE(::testing::Message() << "direction " << direction);
    Floats host = qk;
    ops::rope_apply(host.data(), cos_table.data(), sin_table.data(), rows, seq, width, heads, hd, direction);
    const auto dev = run_twice("rope_apply", {qk, cos_table, sin_table}, [&](std::vector<float*>& t) {
      cuda::rope_apply(t[0], t[1], t[2], rows, seq, width, heads, hd, direction, stream());
    });
    expect_close("rope_apply", dev[0], host);
  }
}

TEST(GpuOps, SwigluForwardAndBackward) {
  const std::int64_t rows = 37, hidden = 389;
  const Floats h13 = random_floats(std::size_t(rows * 2 * hidden), 10, 3.0f);
  const Floats dout = random_floats(std::size_t(rows * hidden), 11, 1.0f);
  Floats out(std::size_t(rows * hidden)), dh13(h13.size());
  ops::swiglu_forward(out.data(), h13.data(), rows, hidden);
  ops::swiglu_backward(dh13.data(), dout.data(), h13.data(), rows, hidden);
  const auto dev = run_twice("swiglu", {Floats(out.size()), Floats(dh13.size()), h13, dout},
                             [&](std::vector<float*>& t) {
                               cuda::swiglu_forward(t[0], t[2], rows, hidden, stream());
                               cuda::swiglu_backward(t[1], t[3], t[2], rows, hidden, stream());
                             });
  expect_close("swiglu_forward", dev[0], out);
  expect_close("swiglu_backward", dev[1], dh13);
}

TEST(GpuOps, CopyScaleFill) {
  const std::int64_t n = 100003;
  const Floats src = random_floats(std::size_t(n), 12, 1.0f), x = random_floats(std::size_t(n), 13, 1.0f);
  Floats copied(src.size()), scaled = x, filled(src.size());
  ops::copy(copied.data(), src.data(), n);
  ops::scale(scaled.data(), 0.37f, n);
  ops::fill(filled.data(), 1.25f, n);
  const auto dev = run_twice("copy/scale/fill", {Floats(src.size()), src, x, Floats(src.size())},
                             [&](std::vector<float*>& t) {
                               cuda::copy(t[0], t[1], n, stream());
                               cuda::scale(t[2], 0.37f, n, stream());
                               cuda::fill(t[3], 1.25f, n, stream());
                             });
  expect_same_bits("copy", dev[0], copied);
  expect_same_bits("scale", dev[2], scaled);
  expect_same_bits("fill", dev[3], filled);
}

TEST(GpuOps, CrossEntropyWithIgnoredRows) {
  for (const std::int64_t vocab : {std::int64_t(1001), std::int64_t(50257)}) {
    const std::int64_t rows = 13;
    std::vector<std::int32_t> targets(static_cast<std::size_t>(rows));
    for (std::int64_t r = 0; r < rows; ++r)
      targets[std::size_t(r)] = r % 4 == 1 ? kIgnore : std::int32_t((r * 7727 + 5) % vocab);
    targets.back() = std::int32_t(vocab - 1);  // the last logit of a row
    DeviceBuffer<std::int32_t> d_targets(targets);
    const Floats logits = random_floats(std::size_t(rows * vocab), 14, 4.0f);
    for (const bool want_grad : {true, false}) {
      SCOPED_TRACE(::testing::Message() << "vocab " << vocab << ", want_grad " << want_grad);
      Floats z = logits, loss(static_cast<std::size_t>(rows));
      ops::cross_entropy_rows(z.data(), loss.data(), targets.data(), rows, vocab, kIgnore, 0.125f, want_grad);
      const auto dev = run_twice("cross_entropy_rows", {logits, Floats(loss.size(), -1.0f)},
                                 [&](std::vector<float*>& t) {
                                   cuda::cross_entropy_rows(t[0], t[1], d_targets.get(), rows, vocab, kIgnore, 0.125f,
                                                            want_grad, stream());
                                 });
      expect_close("cross_entropy_rows loss", dev[1], loss);
      expect_close(want_grad ? "cross_entropy_rows gradient" : "cross_entropy_rows exponentials", dev[0], z);
      for (std::int64_t r = 0; r < rows; ++r) {
        if (targets[std::size_t(r)] != kIgnore) continue;
        EXPECT_EQ(dev[1][std::size_t(r)], 0.0f) << "ignored row " << r << " has a loss";
        for (std::int64_t j = 0; want_grad && j < vocab; ++j)
          ASSERT_EQ(dev[0][std::size_t(r * vocab + j)], 0.0f) << "ignored row " << r << " has a gradient";
      }
    }
  }
}

TEST(GpuOps, LossSumCountsKeptTargets) {
  const std::int64_t n = 5003;
  const Floats loss = random_floats(std::size_t(n), 15, 2.0f);
  std::vector<std::int32_t> targets(static_cast<std::size_t>(n));
  std::int64_t kept = 0;
  double sum = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    targets[std::size_t(i)] = i % 7 == 3 ? kIgnore : std::int32_t(i);
    kept += targets[std::size_t(i)] != kIgnore;
    sum += double(loss[std::size_t(i)]);
  }
  DeviceBuffer<std::int32_t> d_targets(targets);
  DeviceBuffer<float> d_loss(loss);
  std::vector<double> sums;
  for (int run = 0; run < 2; ++run) {
    DeviceBuffer<double> d_sum(std::vector<double>{-1.0});
    DeviceBuffer<std::int64_t> d_count(std::vector<std::int64_t>{-1});
    cuda::loss_sum(d_sum.get(), d_count.get(), d_loss.get(), d_targets.get(), n, kIgnore, stream());
    sums.push_back(d_sum.read()[0]);
    EXPECT_EQ(d_count.read()[0], kept);
  }
  EXPECT_NEAR(sums[0], sum, 1e-9 * std::abs(sum) + 1e-12);
  EXPECT_EQ(std::memcmp(&sums[0], &sums[1], sizeof(double)), 0) << "loss_sum does not repeat bitwise";
}

// gemm: row-major op(A) [m x k], op(B) [k x n], C [m x n] with padded leading dimensions.
struct GemmCase {
  Trans ta, tb;
  std::int64_t m, n, k;
  float alpha, beta;
  std::int64_t c_offset = 0;  // C starts this many floats into its buffer (1: only 4-byte aligned)
};

struct GemmResult {
  Floats host, device;
  // Bf16 only: max over C of |alpha| sum_p |op(A)_ip op(B)_pj| + |beta C_ij| with the operands rounded to bf16.
  double scale;
};

GemmResult run_gemm(const GemmCase& c, Precision precision) {
  const std::int64_t a_rows = c.ta == Trans::No ? c.m : c.k, a_cols = c.ta == Trans::No ? c.k : c.m;
  const std::int64_t b_rows = c.tb == Trans::No ? c.k : c.n, b_cols = c.tb == Trans::No ? c.n : c.k;
  const std::int64_t lda = a_cols + 3, ldb = b_cols + 5, ldc = c.n + 2;
  const Floats a = random_floats(std::size_t(a_rows * lda), 16, 1.0f);
  const Floats b = random_floats(std::size_t(b_rows * ldb), 17, 1.0f);
  const Floats buffer = random_floats(std::size_t(c.c_offset + c.m * ldc), 18, 1.0f);
  Floats host = buffer;
  gemm<float>(c.ta, c.tb, c.m, c.n, c.k, c.alpha, a.data(), lda, b.data(), ldb, c.beta, host.data() + c.c_offset, ldc,
              precision);
  const std::string what = std::string("gemm ") + precision_name(precision);
  const Floats device = run_twice(what, {a, b, buffer}, [&](std::vector<float*>& t) {
    cuda::gemm(c.ta, c.tb, c.m, c.n, c.k, c.alpha, t[0], lda, t[1], ldb, c.beta, t[2] + c.c_offset, ldc, precision,
               stream());
  })[2];
  EXPECT_EQ(std::memcmp(device.data(), buffer.data(), std::size_t(c.c_offset) * sizeof(float)), 0)
      << "written before C";
  GemmResult result;
  const Floats c0(buffer.begin() + c.c_offset, buffer.end());
  result.host.assign(host.begin() + c.c_offset, host.end());
  result.device.assign(device.begin() + c.c_offset, device.end());
  auto at = [](const Floats& x, Trans t, std::int64_t i, std::int64_t j, std::int64_t ld) {
    return double(round_to_bf16(t == Trans::No ? x[std::size_t(i * ld + j)] : x[std::size_t(j * ld + i)]));
  };
  result.scale = 0;
  if (precision == Precision::Bf16)
    for (std::int64_t i = 0; i < c.m; ++i)
      for (std::int64_t j = 0; j < c.n; ++j) {
        double s = std::abs(double(c.beta) * c0[std::size_t(i * ldc + j)]);
        for (std::int64_t p = 0; p < c.k; ++p)
          s += std::abs(double(c.alpha) * at(a, c.ta, i, p, lda) * at(b, c.tb, p, j, ldb));
        result.scale = std::max(result.scale, s);
      }
  for (std::int64_t i = 0; i < c.m; ++i)  // C's padding is untouched
    for (std::int64_t j = c.n; j < ldc; ++j)
      EXPECT_EQ(result.device[std::size_t(i * ldc + j)], c0[std::size_t(i * ldc + j)]) << "padding of C written";
  return result;
}

const GemmCase kGemmShapes[] = {{Trans::No, Trans::No, 67, 45, 129, 1.0f, 0.0f},
                                {Trans::No, Trans::No, 1, 301, 77, -2.0f, 0.25f},   // one row (a decoder step)
                                {Trans::No, Trans::No, 197, 1030, 301, 0.5f, 1.0f},  // accumulate into C
                                {Trans::No, Trans::No, 33, 65, 47, 1.0f, 1.0f, 1}};  // C only 4-byte aligned

TEST(GpuOps, GemmFp32EveryTransposition) {
  for (const Trans ta : {Trans::No, Trans::Yes})
    for (const Trans tb : {Trans::No, Trans::Yes})
      for (GemmCase c : kGemmShapes) {
        c.ta = ta;
        c.tb = tb;
        SCOPED_TRACE(::testing::Message() << "ta " << int(ta) << " tb " << int(tb) << ", " << c.m << "x" << c.n << "x"
                                          << c.k);
        const GemmResult r = run_gemm(c, Precision::Fp32);
        expect_close("gemm fp32", r.device, r.host);
      }
}

TEST(GpuOps, GemmEmptyInnerDimensionScalesC) {
  for (const Precision precision : {Precision::Fp32, Precision::Bf16}) {
    const GemmResult r = run_gemm({Trans::No, Trans::Yes, 5, 7, 0, 1.0f, 0.5f}, precision);
    expect_close(std::string("gemm with k = 0, ") + precision_name(precision), r.device, r.host);
  }
}

TEST(GpuOps, GemmBf16EveryTransposition) {
  if (!cuda::bf16_supported()) GTEST_SKIP() << "no bf16 tensor cores (compute capability below 8.0)";
  for (const Trans ta : {Trans::No, Trans::Yes})
    for (const Trans tb : {Trans::No, Trans::Yes})
      for (GemmCase c : kGemmShapes) {
        c.ta = ta;
        c.tb = tb;
        SCOPED_TRACE(::testing::Message() << "ta " << int(ta) << " tb " << int(tb) << ", " << c.m << "x" << c.n << "x"
                                          << c.k);
        const GemmResult r = run_gemm(c, Precision::Bf16);
        const GemmResult fp32 = run_gemm(c, Precision::Fp32);
        double largest = 0, worst_accumulation = 0, from_fp32 = 0;
        for (const float h : r.host) largest = std::max(largest, std::abs(double(h)));
        const double thr = 1e-3 * largest;
        for (std::size_t i = 0; i < r.host.size(); ++i) {
          const double diff = std::abs(double(r.device[i]) - double(r.host[i]));
          ASSERT_LE(diff, thr + 0.079 * std::abs(double(r.host[i]))) << "element " << i;
          worst_accumulation = std::max(worst_accumulation, diff);
          from_fp32 = std::max(from_fp32, std::abs(double(r.device[i]) - double(fp32.device[i])));
        }
        // Both sides accumulate the same exact bf16 products in fp32: a few ulp of 2^-24 per term at worst.
        EXPECT_LE(worst_accumulation, 2.0 * (4.0 * double(c.k) + 2.0) * 6e-8 * r.scale)
            << "the device is not an fp32 accumulation of the host's bf16-rounded operands";
        EXPECT_GT(from_fp32, 0.0) << "identical to the fp32 product: the operands were not rounded to bf16";
      }
}

}  // namespace
}  // namespace llmtrain::model
