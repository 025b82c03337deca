// cuBLAS backend of gemm() for CUDA builds of Kokkos (compiled when LLMTRAIN_ENABLE_CUDA is ON; never run
// on the project's CPU-only machines).
//
// cuBLAS is column-major; a row-major C = op(A) op(B) is the column-major C^T = op(B)^T op(A)^T, so the
// operands are passed swapped with the same transpose flags. One handle per process, created on first
// use, on the default stream; the dispatch in gemm_host.cpp fences Kokkos around each call.
#include <cublas_v2.h>

#include <cstdint>

#include "llmtrain/core/error.hpp"
#include "llmtrain/model/gemm.hpp"

namespace llmtrain::model {
namespace {

cublasHandle_t handle() {
  static cublasHandle_t h = [] {
    cublasHandle_t created = nullptr;
    const cublasStatus_t status = cublasCreate(&created);
    LLMTRAIN_CHECK(status == CUBLAS_STATUS_SUCCESS, "cublasCreate failed with status ", int(status));
    return created;
  }();
  return h;
}

cublasOperation_t to_cublas(Trans t) { return t == Trans::Yes ? CUBLAS_OP_T : CUBLAS_OP_N; }

void check(cublasStatus_t status, std::int64_t m, std::int64_t n, std::int64_t k) {
  LLMTRAIN_CHECK(status == CUBLAS_STATUS_SUCCESS, "cuBLAS gemm ", m, "x", n, "x", k, " failed with status ", int(status));
}

}  // namespace

template <typename T>
void gemm_cublas(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a,
                 std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc);

template <>
void gemm_cublas<float>(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                        const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
                        std::int64_t ldc) {
  check(cublasSgemm(handle(), to_cublas(trans_b), to_cublas(trans_a), int(n), int(m), int(k), &alpha, b, int(ldb), a,
                    int(lda), &beta, c, int(ldc)),
        m, n, k);
}

template <>
void gemm_cublas<double>(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
                         const double* a, std::int64_t lda, const double* b, std::int64_t ldb, double beta, double* c,
                         std::int64_t ldc) {
  check(cublasDgemm(handle(), to_cublas(trans_b), to_cublas(trans_a), int(n), int(m), int(k), &alpha, b, int(ldb), a,
                    int(lda), &beta, c, int(ldc)),
        m, n, k);
}

}  // namespace llmtrain::model
