// The device's matrix products (device_ops.hpp's gemm and bf16_supported) through cuBLAS and cuBLASLt.
//
// cuBLAS is column-major; a row-major C = op(A) op(B) is the column-major C^T = op(B)^T op(A)^T, so the
// operands are passed swapped with the same transpose flags. One cuBLAS and one cuBLASLt handle per process,
// created on first use; each call runs on the stream it is given.
//
// Precision::Fp32 is cublasGemmEx with CUBLAS_COMPUTE_32F under CUBLAS_DEFAULT_MATH: fp32 products with fp32
// accumulation, never TF32 (that takes CUBLAS_COMPUTE_32F_FAST_TF32 or CUBLAS_TF32_TENSOR_OP_MATH, neither
// used here), and no atomics (cuBLAS's default CUBLAS_ATOMICS_NOT_ALLOWED), so a product repeats bitwise.
//
// Precision::Bf16 goes through cuBLASLt: both operands are rounded to bf16 (nearest even, bf16_round.hpp)
// into device scratch, multiplied on tensor cores with fp32 accumulation (CUBLAS_COMPUTE_32F), and C, alpha,
// beta stay fp32: the arithmetic of the host's bf16 path (gemm_host.cpp). Not CUBLAS_COMPUTE_32F_FAST_16BF,
// which only allows the library to down-convert (it may pick TF32), so results would not be bf16 products.
//
// The scratch (rounded operands, cuBLASLt's workspace) is one set per process, grown and freed in stream
// order: products on different streams must not run at the same time (llmtrain runs them all on the compute
// stream, compute_stream.hpp).
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>

#include "bf16_round.hpp"
#include "cuda_check.hpp"
#include "device_ops.hpp"
#include "llmtrain/core/error.hpp"

namespace llmtrain::model::cuda {
namespace {

constexpr std::size_t kLtWorkspaceBytes = std::size_t(32) << 20;

void check_cublas(cublasStatus_t status, const char* what) {
  LLMTRAIN_CHECK(status == CUBLAS_STATUS_SUCCESS, what, " failed with cuBLAS status ", int(status));
}

cublasHandle_t handle() {
  static const cublasHandle_t h = [] {
    cublasHandle_t created = nullptr;
    check_cublas(cublasCreate(&created), "cublasCreate");
    check_cublas(cublasSetMathMode(created, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    return created;
  }();
  return h;
}

cublasLtHandle_t lt_handle() {
  static const cublasLtHandle_t h = [] {
    cublasLtHandle_t created = nullptr;
    check_cublas(cublasLtCreate(&created), "cublasLtCreate");
    return created;
  }();
  return h;
}

cublasOperation_t to_cublas(Trans t) { return t == Trans::Yes ? CUBLAS_OP_T : CUBLAS_OP_N; }

void check_product(cublasStatus_t status, Index m, Index n, Index k) {
  LLMTRAIN_CHECK(status == CUBLAS_STATUS_SUCCESS, "cuBLAS gemm ", m, "x", n, "x", k, " failed with status ",
                 int(status));
}

// A device buffer that grows to the largest size asked for and is kept for the process (one per use). It is
// reallocated in the order of `stream`, so work already queued there still reads the old buffer.
struct DeviceScratch {
  void* data = nullptr;
  std::size_t bytes = 0;
  void* get(std::size_t wanted, cudaStream_t stream) {
    if (wanted > bytes) {
      if (data != nullptr) check_cuda(cudaFreeAsync(data, stream), "cudaFreeAsync (gemm scratch)");
      data = nullptr;
      bytes = 0;
      check_cuda(cudaMallocAsync(&data, wanted, stream), "cudaMallocAsync (gemm scratch)");
      bytes = wanted;
    }
    return data;
  }
};

// The leading dimension of a rounded copy with `cols` columns: rows start 16-byte aligned, as tensor-core
// kernels load them (an odd width, such as the vocabulary's, would otherwise leave only slower kernels).
Index padded_ld(Index cols) { return (cols + 7) / 8 * 8; }

// The stored row-major rows x cols matrix x (leading dimension ld) rounded into scratch with padded_ld(cols).
const std::uint16_t* rounded(DeviceScratch& scratch, const float* x, Index rows, Index cols, Index ld,
                             cudaStream_t stream) {
  const Index out_ld = padded_ld(cols);
  auto* out = static_cast<std::uint16_t*>(scratch.get(std::size_t(rows * out_ld) * sizeof(std::uint16_t), stream));
  round_rows_to_bf16(out, out_ld, x, rows, cols, ld, stream);
  return out;
}

// cuBLASLt descriptors, destroyed with the scope.
struct MatmulDesc {
  cublasLtMatmulDesc_t desc = nullptr;
  MatmulDesc(cublasOperation_t op_a, cublasOperation_t op_b) {
    check_cublas(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
    check_cublas(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof op_a), "TRANSA");
    check_cublas(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof op_b), "TRANSB");
  }
  ~MatmulDesc() { cublasLtMatmulDescDestroy(desc); }
};

struct Layout {  // column-major rows x cols, leading dimension ld
  cublasLtMatrixLayout_t layout = nullptr;
  Layout(cudaDataType_t type, Index rows, Index cols, Index ld) {
    check_cublas(cublasLtMatrixLayoutCreate(&layout, type, std::uint64_t(rows), std::uint64_t(cols), ld),
                 "cublasLtMatrixLayoutCreate");
  }
  ~Layout() { cublasLtMatrixLayoutDestroy(layout); }
};

// The largest power of two up to 256 that divides the address: cuBLASLt's heuristic assumes 256-byte aligned
// matrices unless told otherwise, and C may start anywhere in a buffer (a unit's gradient, a chunk's rows).
std::uint32_t alignment_of(const void* p) {
  std::uint32_t alignment = 256;
  while (alignment > 1 && reinterpret_cast<std::uintptr_t>(p) % alignment != 0) alignment /= 2;
  return alignment;
}

struct Preference {
  cublasLtMatmulPreference_t pref = nullptr;
  Preference(std::size_t workspace_bytes, const float* c) {
    check_cublas(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
    check_cublas(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                      &workspace_bytes, sizeof workspace_bytes),
                 "CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES");
    const std::uint32_t c_alignment = alignment_of(c);  // C is D too: the product is written in place
    for (const auto attribute :
         {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
      check_cublas(cublasLtMatmulPreferenceSetAttribute(pref, attribute, &c_alignment, sizeof c_alignment),
                   "CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C/D_BYTES");
  }
  ~Preference() { cublasLtMatmulPreferenceDestroy(pref); }
};

// Row-major C[m x n] = alpha * bf16(op(A)) bf16(op(B)) + beta * C with k > 0.
void gemm_lt_bf16(Trans trans_a, Trans trans_b, Index m, Index n, Index k, float alpha, const float* a, Index lda,
                  const float* b, Index ldb, float beta, float* c, Index ldc, cudaStream_t stream) {
  static DeviceScratch a16, b16, workspace;
  // Stored shapes (row-major); a row-major R x C matrix is a column-major C x R one.
  const Index a_rows = trans_a == Trans::No ? m : k, a_cols = trans_a == Trans::No ? k : m;
  const Index b_rows = trans_b == Trans::No ? k : n, b_cols = trans_b == Trans::No ? n : k;
  const std::uint16_t* a_bf16 = rounded(a16, a, a_rows, a_cols, lda, stream);
  const std::uint16_t* b_bf16 = rounded(b16, b, b_rows, b_cols, ldb, stream);
  const MatmulDesc desc(to_cublas(trans_b), to_cublas(trans_a));
  const Layout first(CUDA_R_16BF, b_cols, b_rows, padded_ld(b_cols));
  const Layout second(CUDA_R_16BF, a_cols, a_rows, padded_ld(a_cols));
  const Layout out(CUDA_R_32F, n, m, ldc);
  const Preference pref(kLtWorkspaceBytes, c);  // the rounded operands are scratch: 256-byte aligned
  cublasLtMatmulHeuristicResult_t algo{};
  int found = 0;
  check_cublas(cublasLtMatmulAlgoGetHeuristic(lt_handle(), desc.desc, first.layout, second.layout, out.layout,
                                              out.layout, pref.pref, 1, &algo, &found),
               "cublasLtMatmulAlgoGetHeuristic");
  LLMTRAIN_CHECK(found > 0, "cuBLASLt has no bf16 algorithm for gemm ", m, "x", n, "x", k, " (ldc ", ldc,
                 ", C aligned to ", alignment_of(c), " bytes)");
  check_product(cublasLtMatmul(lt_handle(), desc.desc, &alpha, b_bf16, first.layout, a_bf16, second.layout, &beta, c,
                               out.layout, c, out.layout, &algo.algo, workspace.get(kLtWorkspaceBytes, stream),
                               kLtWorkspaceBytes, stream),
                m, n, k);
}

}  // namespace

bool bf16_supported() {
  int device = 0, major = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  check_cuda(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), "cudaDeviceGetAttribute");
  return major >= 8;
}

void gemm(Trans trans_a, Trans trans_b, Index m, Index n, Index k, float alpha, const float* a, Index lda,
          const float* b, Index ldb, float beta, float* c, Index ldc, Precision precision, cudaStream_t stream) {
  if (m == 0 || n == 0) return;
  if (precision == Precision::Bf16 && k > 0) {  // k = 0 only scales C: the fp32 call does that
    gemm_lt_bf16(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, stream);
    return;
  }
  for (const Index extent : {m, n, k, lda, ldb, ldc})
    LLMTRAIN_CHECK(extent <= INT_MAX, "cuBLAS gemm ", m, "x", n, "x", k, " (lda ", lda, ", ldb ", ldb, ", ldc ", ldc,
                   "): an extent exceeds cuBLAS's int");
  check_cublas(cublasSetStream(handle(), stream), "cublasSetStream");
  // With k = 0 an operand may have leading dimension 0; cuBLAS wants at least 1 and then reads nothing.
  check_product(cublasGemmEx(handle(), to_cublas(trans_b), to_cublas(trans_a), int(n), int(m), int(k), &alpha, b,
                             CUDA_R_32F, int(std::max<Index>(ldb, 1)), a, CUDA_R_32F, int(std::max<Index>(lda, 1)),
                             &beta, c, CUDA_R_32F, int(ldc), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                m, n, k);
}

}  // namespace llmtrain::model::cuda
