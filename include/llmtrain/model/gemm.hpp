// The host matrix-multiply dispatch of llmtrain: every product of the model on host memory goes through gemm().
//
// Row-major, BLAS semantics: C[m x n] = alpha * op(A)[m x k] * op(B)[k x n] + beta * C, on host memory. It
// calls CBLAS (OpenBLAS; see blas_runtime.hpp for its kernel choice), except under a progress poller
// (core/comm_progress.hpp), where float products on AVX-512 CPUs run in our kernels, which poll between their
// blocks (docs/model.md). Instantiated for float and double (double backs the gradient checks). Products on
// device memory are the device backend's: cuda::gemm (src/model/cuda/device_ops.hpp, cuBLAS), with the same
// semantics and these Trans / Precision types.
//
// Precision::Bf16 (train.precision = "bf16") is mixed precision as in the seeds' runs: both operands are
// rounded to bfloat16 (nearest even) and the product is accumulated and written in fp32 (C, alpha, beta
// stay fp32: gradients accumulate in fp32). Here that is our AVX512_BF16 kernel (Debian's OpenBLAS has no
// cblas_sbgemm), fast only on CPUs with AVX512_BF16 (bf16_supported()), emulated elsewhere; on a GPU,
// cuBLASLt where cuda::bf16_supported() (compute capability 8.0 or later). The job falls back to fp32 where
// bf16 is not fast and says so.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace llmtrain::model {

enum class Trans { No, Yes };
enum class Precision { Fp32, Bf16 };

Precision parse_precision(const std::string& name);  // "fp32" | "bf16"; throws llmtrain::Error otherwise
const char* precision_name(Precision precision);
// Whether Precision::Bf16 runs at bf16 speed in gemm(): the CPU has AVX512_BF16. (A GPU's answer is
// cuda::bf16_supported().)
bool bf16_supported();
// Why Precision::Bf16 is slower than fp32 in gemm() on this CPU, though supported (an Intel CPU:
// llmtrain::bf16_slower_reason); empty where it is not. Says nothing about a GPU's products.
std::string bf16_slowdown();

// Bf16 is for float only (a double product with Bf16 throws).
template <typename T>
void gemm(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, T alpha,
          const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc,
          Precision precision = Precision::Fp32);

// Work done through gemm() (host products only) since the last reset: benchmarks use it for the share of time
// outside gemm.
struct GemmStats {
  double flops = 0;    // 2*m*n*k per call
  double seconds = 0;  // wall time inside the BLAS calls
  std::int64_t calls = 0;
};
GemmStats gemm_stats();
void reset_gemm_stats(const GemmStats& value = GemmStats{});

// The machine's matrix-multiply peak in `precision` as this process sees it (the MFU denominator), in
// flop/s: square n x n x n float products through gemm(), after two warm-up calls, for at least 10 calls and
// at least `min_seconds`, and the 90th percentile of their rates (peak_from_rates). Does not count towards
// gemm_stats().
double measure_gemm_peak(Precision precision = Precision::Fp32, std::int64_t n = 512, double min_seconds = 0.5);

// The `percentile` (0, 100] of `rates` by nearest rank: what measure_gemm_peak reports from its samples.
double peak_from_rates(std::vector<double> rates, double percentile);

}  // namespace llmtrain::model
