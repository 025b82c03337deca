// fp32 matrix product on AVX-512 CPUs, for products that must let communication progress while they run.
//
// Why our own: under FSDP the training thread polls MPI about every parallel.progress_us, and OpenBLAS
// can only be interrupted between calls. Cutting a product into row panels of about 1 ms made each panel
// pack the whole of op(B) again, 10-20 % of compute at the model sizes of the window benchmark
// (perf/RESULTS.md). This kernel packs each block of op(B) once per product and calls `between_blocks`
// after every block of rows instead.
//
// Blocking as in GotoBLAS, like the bf16 kernel (gemm_bf16_avx512.cpp): a KC x NC block of op(B) is packed
// once and reused by every MC x KC block of op(A); both go into micro-panels (NR columns, MR rows) and a
// 6 x 64 register tile runs over each pair: 24 accumulators, 4 vectors of B, and A broadcast from memory;
// each B load feeds 6 FMAs. The summation order depends only on the shapes (never on where polls happen),
// so results are deterministic. Compiled with AVX-512 flags: only this translation unit may use them, so it
// includes no header with inline functions and keeps everything but its entry point in an anonymous
// namespace.
#include <immintrin.h>
#include <stdlib.h>

#include "gemm_f32_kernel.hpp"

namespace llmtrain::model::isa {
namespace {

#include "gemm_avx512_common.inc"

constexpr long kKC = 256, kMC = kMR * 32, kNC = 512;  // k per block, rows and columns per block

// op(B)[p0 .. p0+kc) x [j0 .. j0+nc) -> panels of kNR columns: column j of a panel at k is out[k * kNR + j],
// zeros past nc. B not transposed: each k row of a panel is 64 contiguous floats.
void pack_b_rows(float* out, const float* b, long ldb, long p0, long kc, long j0, long nc) {
  for (long jp = 0; jp < nc; jp += kNR, out += kc * kNR) {
    const long width = nc - jp;
    for (long q = 0; q < kc; ++q) {
      const float* row = b + (p0 + q) * ldb + j0 + jp;
      for (int v = 0; v < kVectors; ++v) _mm512_storeu_ps(out + q * kNR + 16 * v, load(row + 16 * v, width - 16 * v));
    }
  }
}

// The same panels from a transposed B (column j of op(B) is b[j * ldb + k], k contiguous): 16 columns of
// 16 k at a time, transposed in registers.
void pack_b_columns(float* out, const float* b, long ldb, long p0, long kc, long j0, long nc) {
  for (long jp = 0; jp < nc; jp += kNR, out += kc * kNR)
    for (long i0 = 0; i0 < kNR; i0 += 16)
      for (long q0 = 0; q0 < kc; q0 += 16) {
        __m512i r[16];
        for (long i = 0; i < 16; ++i) {
          const long j = jp + i0 + i;
          r[i] = j < nc ? _mm512_castps_si512(load(b + (j0 + j) * ldb + p0 + q0, kc - q0)) : _mm512_setzero_si512();
        }
        transpose16(r);
        const long n = kc - q0 < 16 ? kc - q0 : 16;
        for (long q = 0; q < n; ++q) _mm512_storeu_si512(out + (q0 + q) * kNR + i0, r[q]);
      }
}

// op(A)[i0 .. i0+mc) x [p0 .. p0+kc) -> panels of kMR rows: row i of a panel at k is out[k * kMR + i], zero
// rows past mc. A not transposed (row i is a[i * lda + k], k contiguous): two rows' 8 k each go into one
// vector, and the SpreadSix permutes put 8 k of 6 rows in place (48 floats) with whole-vector stores.
void pack_a_rows(float* out, const float* a, long lda, long i0, long mc, long p0, long kc) {
  const SixRowSpreader spread;
  for (long ip = 0; ip < mc; ip += kMR, out += kc * kMR) {
    const long width = mc - ip;
    for (long q0 = 0; q0 < kc; q0 += 8) {
      const long left = kc - q0 < 8 ? kc - q0 : 8;
      __m512i two[3];
      for (long j = 0; j < 3; ++j) {
        const float* even = a + (i0 + ip + 2 * j) * lda + p0 + q0;
        const __mmask16 lo = 2 * j < width ? __mmask16((1u << left) - 1) : 0;
        const __mmask16 hi = 2 * j + 1 < width ? __mmask16(((1u << left) - 1) << 8) : 0;
        two[j] = _mm512_castps_si512(_mm512_mask_loadu_ps(_mm512_maskz_loadu_ps(lo, even), hi, even + lda - 8));
      }
      spread.store(reinterpret_cast<unsigned*>(out + q0 * kMR), two, kMR * left);
    }
  }
}

// The same panels from a transposed A (row i of op(A) is a[k * lda + i]): the 6 rows of a panel are 6
// contiguous floats at each k. k outermost, so that each line of A is read once, by consecutive panels.
void pack_a_columns(float* out, const float* a, long lda, long i0, long mc, long p0, long kc) {
  for (long q = 0; q < kc; ++q) {
    const float* line = a + (p0 + q) * lda + i0;
    for (long ip = 0; ip < mc; ip += kMR) {
      const __mmask16 rows = __mmask16((1u << (mc - ip < kMR ? mc - ip : kMR)) - 1);
      _mm512_mask_storeu_ps(out + ip * kc + q * kMR, __mmask16((1u << kMR) - 1), _mm512_maskz_loadu_ps(rows, line + ip));
    }
  }
}

// acc[6 x 64] = A panel x B panel over kc; then into C as update_c describes.
void micro_kernel(long kc, const float* a, const float* b, float alpha, float beta, bool first, float* c, long ldc,
                  long rows, long cols) {
  __m512 acc[kMR][kVectors];
  for (long i = 0; i < kMR; ++i)
    for (int v = 0; v < kVectors; ++v) acc[i][v] = _mm512_setzero_ps();
  prefetch_c(c, ldc, rows, cols);
#pragma GCC unroll 4
  for (long q = 0; q < kc; ++q) {
    __m512 bv[kVectors];
    for (int v = 0; v < kVectors; ++v) bv[v] = _mm512_loadu_ps(b + q * kNR + 16 * v);
    for (long i = 0; i < kMR; ++i) {
      const __m512 ai = _mm512_set1_ps(a[q * kMR + i]);
      for (int v = 0; v < kVectors; ++v) acc[i][v] = _mm512_fmadd_ps(ai, bv[v], acc[i][v]);
    }
  }
  update_c(acc, alpha, beta, first, c, ldc, rows, cols);
}

}  // namespace

void gemm_f32_avx512(bool trans_a, bool trans_b, long m, long n, long k, float alpha, const float* a, long lda,
                     const float* b, long ldb, float beta, float* c, long ldc, void (*between_blocks)()) {
  if (k == 0 || alpha == 0.0f) return scale_c(m, n, beta, c, ldc);
  // Scratch for one packed block of each operand, kept between calls (one thread per process).
  static float* packed_a = static_cast<float*>(aligned_alloc(64, kMC * kKC * sizeof(float)));
  static float* packed_b = static_cast<float*>(aligned_alloc(64, kNC * kKC * sizeof(float)));
  for (long j0 = 0; j0 < n; j0 += kNC) {
    const long nc = n - j0 < kNC ? n - j0 : kNC;
    for (long p0 = 0; p0 < k; p0 += kKC) {
      const long kc = k - p0 < kKC ? k - p0 : kKC;
      if (trans_b)
        pack_b_columns(packed_b, b, ldb, p0, kc, j0, nc);
      else
        pack_b_rows(packed_b, b, ldb, p0, kc, j0, nc);
      for (long i0 = 0; i0 < m; i0 += kMC) {
        const long mc = m - i0 < kMC ? m - i0 : kMC;
        if (trans_a)
          pack_a_columns(packed_a, a, lda, i0, mc, p0, kc);
        else
          pack_a_rows(packed_a, a, lda, i0, mc, p0, kc);
        for (long jp = 0; jp < nc; jp += kNR)
          for (long ip = 0; ip < mc; ip += kMR)
            micro_kernel(kc, packed_a + ip * kc, packed_b + jp * kc, alpha, beta, p0 == 0, c + (i0 + ip) * ldc + j0 + jp,
                         ldc, mc - ip < kMR ? mc - ip : kMR, nc - jp < kNR ? nc - jp : kNR);
        if (between_blocks) between_blocks();
      }
    }
  }
}

}  // namespace llmtrain::model::isa
