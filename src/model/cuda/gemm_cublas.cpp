// cuBLAS backend of gemm() for CUDA builds of Kokkos (compiled when LLMTRAIN_ENABLE_CUDA is ON; never run
// on the project's CPU-only machines, so never tested here: CI only proves that it builds).
//
// cuBLAS is column-major; a row-major C = op(A) op(B) is the column-major C^T = op(B)^T op(A)^T, so the
// operands are passed swapped with the same transpose flags. One handle per process, created on first
// use, on the default stream; the dispatch in gemm_host.cpp fences Kokkos around each call.
//
// Precision::Bf16 goes through cuBLASLt: both operands are rounded to bf16 (nearest even) into device
// scratch (bf16_round.cu), multiplied on tensor cores with fp32 accumulation (CUBLAS_COMPUTE_32F), and C,
// alpha, beta stay fp32: the arithmetic of the host path. Not CUBLAS_COMPUTE_32F_FAST_16BF, which only
// allows the library to down-convert (it may pick TF32), so results would not be bf16 products.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "llmtrain/core/error.hpp"
#include "llmtrain/model/gemm.hpp"

namespace llmtrain::model {

int cuda_round_to_bf16(const float* src, std::int64_t rows, std::int64_t cols, std::int64_t ld, void* dst);

namespace {

constexpr std::size_t kLtWorkspaceBytes = std::size_t(32) << 20;

void check_cuda(cudaError_t status, const char* what) {
  LLMTRAIN_CHECK(status == cudaSuccess, what, " failed: ", cudaGetErrorString(status));
}

void check_lt(cublasStatus_t status, const char* what) {
  LLMTRAIN_CHECK(status == CUBLAS_STATUS_SUCCESS, what, " failed with status ", int(status));
}

cublasHandle_t handle() {
  static cublasHandle_t h = [] {
    cublasHandle_t created = nullptr;
    const cublasStatus_t status = cublasCreate(&created);
    LLMTRAIN_CHECK(status == CUBLAS_STATUS_SUCCESS, "cublasCreate failed with status ", int(status));
    return created;
  }();
  return h;
}

cublasLtHandle_t lt_handle() {
  static cublasLtHandle_t h = [] {
    cublasLtHandle_t created = nullptr;
    check_lt(cublasLtCreate(&created), "cublasLtCreate");
    return created;
  }();
  return h;
}

cublasOperation_t to_cublas(Trans t) { return t == Trans::Yes ? CUBLAS_OP_T : CUBLAS_OP_N; }

void check(cublasStatus_t status, std::int64_t m, std::int64_t n, std::int64_t k) {
  LLMTRAIN_CHECK(status == CUBLAS_STATUS_SUCCESS, "cuBLAS gemm ", m, "x", n, "x", k, " failed with status ", int(status));
}

// A device buffer that grows to the largest size asked for and is kept for the process (one per use).
struct DeviceScratch {
  void* data = nullptr;
  std::size_t bytes = 0;
  void* get(std::size_t wanted) {
    if (wanted > bytes) {
      if (data != nullptr) check_cuda(cudaFree(data), "cudaFree");
      data = nullptr;
      check_cuda(cudaMalloc(&data, wanted), "cudaMalloc (bf16 gemm scratch)");
      bytes = wanted;
    }
    return data;
  }
};

// The stored row-major rows x cols matrix x (leading dimension ld) rounded into scratch, contiguous.
const void* rounded(DeviceScratch& scratch, const float* x, std::int64_t rows, std::int64_t cols, std::int64_t ld) {
  void* out = scratch.get(std::size_t(rows * cols) * 2);
  check_cuda(cudaError_t(cuda_round_to_bf16(x, rows, cols, ld, out)), "bf16 rounding kernel launch");
  return out;
}

// cuBLASLt descriptors, destroyed with the scope.
struct MatmulDesc {
  cublasLtMatmulDesc_t desc = nullptr;
  MatmulDesc(cublasOperation_t op_a, cublasOperation_t op_b) {
    check_lt(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
    check_lt(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof op_a), "TRANSA");
    check_lt(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof op_b), "TRANSB");
  }
  ~MatmulDesc() { cublasLtMatmulDescDestroy(desc); }
};

struct Layout {  // column-major rows x cols, leading dimension ld
  cublasLtMatrixLayout_t layout = nullptr;
  Layout(cudaDataType_t type, std::int64_t rows, std::int64_t cols, std::int64_t ld) {
    check_lt(cublasLtMatrixLayoutCreate(&layout, type, std::uint64_t(rows), std::uint64_t(cols), ld),
             "cublasLtMatrixLayoutCreate");
  }
  ~Layout() { cublasLtMatrixLayoutDestroy(layout); }
};

struct Preference {
  cublasLtMatmulPreference_t pref = nullptr;
  explicit Preference(std::size_t workspace_bytes) {
    check_lt(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
    check_lt(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
                                                  sizeof workspace_bytes),
             "CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES");
  }
  ~Preference() { cublasLtMatmulPreferenceDestroy(pref); }
};

// Row-major C[m x n] = alpha * bf16(op(A)) bf16(op(B)) + beta * C with k > 0.
void gemm_lt_bf16(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                  const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
                  std::int64_t ldc) {
  static DeviceScratch a16, b16, workspace;
  // Stored shapes (row-major); once contiguous, a row-major R x C matrix is a column-major C x R one.
  const std::int64_t a_rows = trans_a == Trans::No ? m : k, a_cols = trans_a == Trans::No ? k : m;
  const std::int64_t b_rows = trans_b == Trans::No ? k : n, b_cols = trans_b == Trans::No ? n : k;
  const void* a_bf16 = rounded(a16, a, a_rows, a_cols, lda);
  const void* b_bf16 = rounded(b16, b, b_rows, b_cols, ldb);
  const MatmulDesc desc(to_cublas(trans_b), to_cublas(trans_a));
  const Layout first(CUDA_R_16BF, b_cols, b_rows, b_cols), second(CUDA_R_16BF, a_cols, a_rows, a_cols);
  const Layout out(CUDA_R_32F, n, m, ldc);
  const Preference pref(kLtWorkspaceBytes);
  cublasLtMatmulHeuristicResult_t algo{};
  int found = 0;
  check_lt(cublasLtMatmulAlgoGetHeuristic(lt_handle(), desc.desc, first.layout, second.layout, out.layout,
                                          out.layout, pref.pref, 1, &algo, &found),
           "cublasLtMatmulAlgoGetHeuristic");
  LLMTRAIN_CHECK(found > 0, "cuBLASLt has no bf16 algorithm for gemm ", m, "x", n, "x", k);
  check(cublasLtMatmul(lt_handle(), desc.desc, &alpha, b_bf16, first.layout, a_bf16, second.layout, &beta, c,
                       out.layout, c, out.layout, &algo.algo, workspace.get(kLtWorkspaceBytes), kLtWorkspaceBytes,
                       nullptr),
        m, n, k);
}

}  // namespace

// bf16 tensor-core products need compute capability 8.0 (Ampere) or later.
bool cuda_bf16_supported() {
  int device = 0, major = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  check_cuda(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), "cudaDeviceGetAttribute");
  return major >= 8;
}

template <typename T>
void gemm_cublas(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a,
                 std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc, Precision precision);

template <>
void gemm_cublas<float>(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                        const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
                        std::int64_t ldc, Precision precision) {
  if (precision == Precision::Bf16 && k > 0) {  // k = 0 only scales C: the fp32 call does that
    gemm_lt_bf16(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  check(cublasSgemm(handle(), to_cublas(trans_b), to_cublas(trans_a), int(n), int(m), int(k), &alpha, b, int(ldb), a,
                    int(lda), &beta, c, int(ldc)),
        m, n, k);
}

template <>
void gemm_cublas<double>(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
                         const double* a, std::int64_t lda, const double* b, std::int64_t ldb, double beta, double* c,
                         std::int64_t ldc, Precision precision) {
  LLMTRAIN_CHECK(precision == Precision::Fp32, "bf16 products are for float operands only");
  check(cublasDgemm(handle(), to_cublas(trans_b), to_cublas(trans_a), int(n), int(m), int(k), &alpha, b, int(ldb), a,
                    int(lda), &beta, c, int(ldc)),
        m, n, k);
}

}  // namespace llmtrain::model
