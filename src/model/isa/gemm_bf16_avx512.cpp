// bf16 matrix product on AVX512_BF16 CPUs (Zen 4, Cooper Lake, Sapphire Rapids): rounds op(A) and op(B)
// to bf16 (nearest even) while packing them and accumulates in fp32 with VDPBF16PS, which multiplies two
// bf16 pairs per 32-bit lane: 64 flops per instruction, twice an fp32 FMA.
//
// Why our own: Debian's OpenBLAS 0.3.21 is built without BUILD_BFLOAT16 (no cblas_sbgemm).
// Blocking as in GotoBLAS: a KC x NC block of op(B) is packed once and reused by every MC x KC block of
// op(A); both are packed into micro-panels (NR columns, MR rows, k in pairs) and a 6 x 64 register tile
// runs over each pair of micro-panels: 24 accumulators, 4 vectors of B and one broadcast pair of A use 29
// of the 32 zmm registers, and each B load feeds 6 instructions. The tile of C is prefetched before the k
// loop (without it its first touch stalls the kernel: about 20 % of the rate). Block sizes were chosen by
// measurement on Zen 5 (perf/RESULTS.md); the summation order depends only on the shapes, so results are
// deterministic. Compiled with AVX-512 flags: only this translation unit may use them, so it includes no
// header with inline functions (the linker could keep this file's copy for baseline code) and keeps
// everything but its entry point in an anonymous namespace.
#include <immintrin.h>
#include <stdlib.h>

#include "gemm_bf16_kernel.hpp"

namespace llmtrain::model::isa {
namespace {

#include "gemm_avx512_common.inc"

constexpr long kKC = 256, kMC = 6 * 32, kNC = 1024;  // k per block (even), rows and columns per block

struct Operand {
  const float* data;
  long ld;
  bool trans;
};

// Rounds 32 floats (two vectors) to 32 bf16, nearest even, in the order given (VCVTNE2PS2BF16 puts its
// second operand first). Inputs below 2^-126 (subnormal) become zero, as the instruction defines.
__m512i to_bf16(__m512 lo, __m512 hi) { return (__m512i)_mm512_cvtne2ps_pbh(hi, lo); }

// Stores the first `lanes` lanes of v, lane j of which belongs to line g0 + j, into the panels (`panel`
// lines each, `pairs` pairs long) at pair q: line l goes to 32-bit slot (l / panel) * pairs * panel +
// q * panel + l % panel. One masked store per panel the lanes touch; its pointer may lie before the panel
// (the masked-off lanes are never written), never before `out`, since line g0 lies in or before that panel.
template <long panel>
void store_lanes(unsigned* out, long pairs, long q, long g0, __m512i v, long lanes) {
  for (long lo = 0; lo < lanes;) {
    const long p = (g0 + lo) / panel, end = (p + 1) * panel - g0 < lanes ? (p + 1) * panel - g0 : lanes;
    const __mmask16 mask = __mmask16(((1u << (end - lo)) - 1) << lo);
    _mm512_mask_storeu_epi32(out + p * pairs * panel + q * panel + (g0 - p * panel), mask, v);
    lo = end;
  }
}

// Packs `width` lines of one panel (rows of op(A) or columns of op(B) whose k is contiguous: line i is
// x[(line0 + i) * ld + k]; zero lines pad it to `panel`) over k in [p0, p0 + kc) into the micro-kernel's
// layout: the bf16 pair (k = p0 + 2q, p0 + 2q + 1) of line i at 32-bit slot q * panel + i; a missing last k
// is zero. 16 lines of 16 pairs at a time, transposed in registers.
void pack_k_contiguous(unsigned short* out, const float* x, long ld, long line0, long width, long panel, long p0,
                       long kc) {
  const long pairs = (kc + 1) / 2;
  unsigned* out32 = reinterpret_cast<unsigned*>(out);
  for (long i0 = 0; i0 < panel; i0 += 16) {
    const long g = panel - i0 < 16 ? panel - i0 : 16;
    const __mmask16 lanes = __mmask16((1u << g) - 1);
    for (long q0 = 0; q0 < pairs; q0 += 16) {
      const long k0 = 2 * q0, left = kc - k0;
      __m512i r[16];
      for (long i = 0; i < 16; ++i) {
        r[i] = _mm512_setzero_si512();
        if (i0 + i >= width) continue;
        const float* line = x + (line0 + i0 + i) * ld + p0 + k0;
        r[i] = to_bf16(load(line, left), load(line + 16, left - 16));
      }
      transpose16(r);
      const long n = pairs - q0 < 16 ? pairs - q0 : 16;
      for (long q = 0; q < n; ++q) _mm512_mask_storeu_epi32(out32 + (q0 + q) * panel + i0, lanes, r[q]);
    }
  }
}

// The same layout for one panel of kMR (6) k-contiguous lines (A's rows, `width` of them real), without
// transposes: two lines' 16 floats each round into one vector (line 2j's 8 pairs, then line 2j+1's), and
// three two-source permutes spread those three vectors over the 48 slots (8 pairs x 6 lines) they fill, stored
// whole. A 16 x 16 transpose would carry 10 lines of padding for every 6.
void pack_k_contiguous_6(unsigned short* out, const float* x, long ld, long line0, long width, long p0, long kc) {
  static_assert(kMR == 6, "kSpreadSix spreads 6 lines");
  const long pairs = (kc + 1) / 2;
  unsigned* out32 = reinterpret_cast<unsigned*>(out);
  const SixRowSpreader spread;
  for (long q0 = 0; q0 < pairs; q0 += 8) {
    const long k = p0 + 2 * q0, left = kc - 2 * q0;
    __m512i two[3];
    for (long j = 0; j < 3; ++j) {
      const float* even = x + (line0 + 2 * j) * ld + k;
      const float* odd = even + ld;
      two[j] = to_bf16(load(even, 2 * j < width ? left : 0), load(odd, 2 * j + 1 < width ? left : 0));
    }
    spread.store(out32 + 6 * q0, two, 6 * (pairs - q0 < 8 ? pairs - q0 : 8));
  }
}

// The same layout for `count` k-strided lines (A's columns: line i is x[k * ld + line0 + i]) in panels of kMR
// (6), 8 pairs of every panel at a time, with whole-vector stores: two masked loads put a pair's two k rows
// (6 lines each) in one vector, one rounding takes two pairs, a word permute interleaves each line's pair, and
// two-source permutes spread the four vectors of 8 pairs over the panel's 48 slots. (Storing lanes straight
// into their panels takes several partial stores per vector, which ran about 1 element per cycle.)
void pack_k_strided_6(unsigned short* out, const float* x, long ld, long line0, long count, long p0, long kc) {
  static_assert(kMR == 6, "the permutes below spread 6 lines");
  const long pairs = (kc + 1) / 2;
  unsigned* out32 = reinterpret_cast<unsigned*>(out);
  // Words of to_bf16(pairs q, q + 1): q's k row in 0..7, its k + 1 row in 8..15, q + 1's in 16..31; line d of
  // pair q (+1) becomes dword d (8 + d).
  alignas(64) short interleave[32];
  for (int d = 0; d < 8; ++d) {
    interleave[2 * d] = short(d), interleave[2 * d + 1] = short(8 + d);
    interleave[16 + 2 * d] = short(16 + d), interleave[17 + 2 * d] = short(24 + d);
  }
  // Slot s of the 48 (pair s / 6, line s % 6) from the vector of pairs 2j, 2j + 1: output vector v takes
  // vectors v and v + 1.
  alignas(64) int spread[48];
  for (int slot = 0; slot < 48; ++slot) {
    const int q = slot / 6, line = slot % 6;
    spread[slot] = (q / 2 == slot / 16 ? 0 : 16) + 8 * (q % 2) + line;
  }
  const __m512i words = _mm512_load_si512(interleave);
  const __m512i spread_v[3] = {_mm512_load_si512(spread), _mm512_load_si512(spread + 16),
                               _mm512_load_si512(spread + 32)};
  for (long q0 = 0; q0 < pairs; q0 += 8) {
    const long slots = 6 * (pairs - q0 < 8 ? pairs - q0 : 8);
    for (long i = 0; i < count; i += kMR) {
      const __mmask16 low = __mmask16((1u << (count - i < kMR ? count - i : kMR)) - 1);
      __m512i two[4];
      for (int j = 0; j < 4; ++j) {
        __m512 rows[2];
        for (int h = 0; h < 2; ++h) {
          const long k = 2 * (q0 + 2 * j + h);  // the pair's first k row, relative to p0
          const float* row = x + (p0 + k) * ld + line0 + i;
          const __mmask16 first = k < kc ? low : 0, second = k + 1 < kc ? __mmask16(low << 8) : 0;
          rows[h] = _mm512_mask_loadu_ps(_mm512_maskz_loadu_ps(first, row), second, row + ld - 8);
        }
        two[j] = _mm512_permutexvar_epi16(words, to_bf16(rows[0], rows[1]));
      }
      unsigned* panel = out32 + i * pairs + 6 * q0;
      for (int v = 0; v < 3; ++v) {
        const __m512i o = _mm512_permutex2var_epi32(two[v], spread_v[v], two[v + 1]);
        const long n = slots - 16 * v;
        if (n >= 16)
          _mm512_storeu_si512(panel + 16 * v, o);
        else if (n > 0)
          _mm512_mask_storeu_epi32(panel + 16 * v, __mmask16((1u << n) - 1), o);
      }
    }
  }
}

// The same layout for `count` lines whose k is strided (line i is x[k * ld + line0 + i]), any number of
// panels in one pass: two k rows side by side are interleaved into pairs, 32 lines at a time, and
// store_lanes puts each line in its panel.
template <long panel>
void pack_k_strided(unsigned short* out, const float* x, long ld, long line0, long count, long p0, long kc) {
  const long pairs = (kc + 1) / 2, padded = (count + panel - 1) / panel * panel;
  unsigned* out32 = reinterpret_cast<unsigned*>(out);
  const __m512i first = _mm512_set_epi16(47, 15, 46, 14, 45, 13, 44, 12, 43, 11, 42, 10, 41, 9, 40, 8, 39, 7, 38,
                                         6, 37, 5, 36, 4, 35, 3, 34, 2, 33, 1, 32, 0);
  const __m512i second = _mm512_add_epi16(first, _mm512_set1_epi16(16));
  for (long q = 0; q < pairs; ++q) {
    const float* r0 = x + (p0 + 2 * q) * ld + line0;
    const float* r1 = r0 + ld;
    const bool has_r1 = 2 * q + 1 < kc;
    for (long g0 = 0; g0 < padded; g0 += 32) {
      const long left = count - g0, lanes = padded - g0 < 32 ? padded - g0 : 32;
      __m512i a = _mm512_setzero_si512(), b = _mm512_setzero_si512();
      if (left > 0) {
        a = to_bf16(load(r0 + g0, left), load(r0 + g0 + 16, left - 16));
        if (has_r1) b = to_bf16(load(r1 + g0, left), load(r1 + g0 + 16, left - 16));
      }
      store_lanes<panel>(out32, pairs, q, g0, _mm512_permutex2var_epi16(a, first, b), lanes < 16 ? lanes : 16);
      if (lanes > 16)
        store_lanes<panel>(out32, pairs, q, g0 + 16, _mm512_permutex2var_epi16(a, second, b), lanes - 16);
    }
  }
}

// op(X)'s lines [line0, line0 + count) over k in [p0, p0 + kc) -> panels of `panel` lines, each pairs * panel
// 32-bit slots long. A's 6-line panels go through the permute packers above (a 16 x 16 transpose or 16-lane
// stores would mostly carry padding); B's 64-line panels one at a time, so that a pass writes one panel.
template <long panel>
void pack(unsigned short* out, const float* x, long ld, bool k_contiguous, long line0, long count, long p0,
          long kc) {
  const long pairs = (kc + 1) / 2;
  if (!k_contiguous && panel == kMR) return pack_k_strided_6(out, x, ld, line0, count, p0, kc);
  for (long i = 0; i < count; i += panel) {  // one panel at a time: the writes of a pass stay in one panel
    const long width = count - i < panel ? count - i : panel;
    if (k_contiguous && panel == kMR)
      pack_k_contiguous_6(out + i * pairs * 2, x, ld, line0 + i, width, p0, kc);
    else if (k_contiguous)
      pack_k_contiguous(out + i * pairs * 2, x, ld, line0 + i, width, panel, p0, kc);
    else
      pack_k_strided<panel>(out + i * pairs * 2, x, ld, line0 + i, width, p0, kc);
  }
}

// op(B)[p0 .. p0+kc) x [j0 .. j0+nc) -> panels of kNR columns.
void pack_b(unsigned short* out, const Operand& b, long p0, long kc, long j0, long nc) {
  pack<kNR>(out, b.data, b.ld, b.trans, j0, nc, p0, kc);
}

// op(A)[i0 .. i0+mc) x [p0 .. p0+kc) -> panels of kMR rows.
void pack_a(unsigned short* out, const Operand& a, long i0, long mc, long p0, long kc) {
  pack<kMR>(out, a.data, a.ld, !a.trans, i0, mc, p0, kc);
}

// acc[6 x 64] = A panel x B panel over `pairs` k pairs; then into C as update_c describes.
void micro_kernel(long pairs, const unsigned short* a, const unsigned short* b, float alpha, float beta, bool first,
                  float* c, long ldc, long rows, long cols) {
  __m512 acc[kMR][kVectors];
  for (long i = 0; i < kMR; ++i)
    for (int v = 0; v < kVectors; ++v) acc[i][v] = _mm512_setzero_ps();
  prefetch_c(c, ldc, rows, cols);
  const int* a_pairs = reinterpret_cast<const int*>(a);
#pragma GCC unroll 4
  for (long q = 0; q < pairs; ++q) {
    __m512bh bv[kVectors];
    for (int v = 0; v < kVectors; ++v) bv[v] = (__m512bh)_mm512_loadu_si512(b + q * kNR * 2 + 32 * v);
    for (long i = 0; i < kMR; ++i) {
      const __m512bh ai = (__m512bh)_mm512_set1_epi32(a_pairs[q * kMR + i]);
      for (int v = 0; v < kVectors; ++v) acc[i][v] = _mm512_dpbf16_ps(acc[i][v], ai, bv[v]);
    }
  }
  update_c(acc, alpha, beta, first, c, ldc, rows, cols);
}

}  // namespace

long gemm_bf16_packed_b_size(long n, long k) { return (n + kNR - 1) / kNR * kNR * (k + k % 2); }

void gemm_bf16_avx512(bool trans_a, bool trans_b, long m, long n, long k, float alpha, const float* a, long lda,
                      const float* b, long ldb, float beta, float* c, long ldc, PackedB* reuse,
                      void (*between_blocks)()) {
  if (k == 0 || alpha == 0.0f) return scale_c(m, n, beta, c, ldc);
  const Operand op_a{a, lda, trans_a}, op_b{b, ldb, trans_b};
  // Scratch for one packed block of each operand, kept between calls (one thread per process).
  static unsigned short* packed_a = static_cast<unsigned short*>(aligned_alloc(64, kMC * kKC * 2));
  static unsigned short* packed_b = static_cast<unsigned short*>(aligned_alloc(64, kNC * kKC * 2));
  for (long j0 = 0; j0 < n; j0 += kNC) {
    const long nc = n - j0 < kNC ? n - j0 : kNC;
    for (long p0 = 0; p0 < k; p0 += kKC) {
      const long kc = k - p0 < kKC ? k - p0 : kKC, pairs = (kc + 1) / 2;
      // With `reuse`, block (j0, p0) lies after the j0 columns before it (each k + k % 2 values long, in
      // pairs) and the p0 rows before it in its own column block (nc rounded up to whole panels).
      unsigned short* block =
          reuse ? reuse->data + j0 * (k + k % 2) + (nc + kNR - 1) / kNR * kNR * p0 : packed_b;
      if (!reuse || !reuse->filled) pack_b(block, op_b, p0, kc, j0, nc);
      for (long i0 = 0; i0 < m; i0 += kMC) {
        const long mc = m - i0 < kMC ? m - i0 : kMC;
        pack_a(packed_a, op_a, i0, mc, p0, kc);
        for (long jp = 0; jp < nc; jp += kNR)
          for (long ip = 0; ip < mc; ip += kMR)
            micro_kernel(pairs, packed_a + ip * pairs * 2, block + jp * pairs * 2, alpha, beta, p0 == 0,
                         c + (i0 + ip) * ldc + j0 + jp, ldc, mc - ip < kMR ? mc - ip : kMR,
                         nc - jp < kNR ? nc - jp : kNR);
        if (between_blocks) between_blocks();
      }
    }
  }
  if (reuse) reuse->filled = true;
}

}  // namespace llmtrain::model::isa
