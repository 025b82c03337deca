// Causal grouped-query attention on a CUDA device (attention_kernels.hpp): FlashAttention-2's scheme in fp32
// CUDA-core arithmetic, deterministic.
//
// Tiles: 64 queries x 64 keys per block of 256 threads (16 x 16). Thread (ty, tx) owns rows ty + 16 i (i < 4)
// and columns tx + 16 j of every tile product, so each product is a 4 x 4 (scores) or 4 x head_dim/16 (values,
// gradients) register micro-tile over shared memory. head_dim is padded with zeros to 32, 64 or 128 (the
// kernels are templated on that width); up to 128 is supported. The same arithmetic as the host tiles
// (attention.cpp), from the same row functions (row_kernels.inc: attention_visible, attention_softmax_row,
// attention_probs_row, attention_dscores_row; fast::exp): only the summation orders of the products differ.
//
// Forward: one block per (query tile, head, row); it walks the key tiles up to the diagonal with the online
// softmax (one thread per query row runs attention_softmax_row on the shared score tile, which also rescales
// the shared output tile), then writes out = o / l and lse = max + log(l) (the host's convention).
// Backward: delta = rowsum(dO * O) (workspace); one kernel per (key tile, kv head, row) accumulates dK and dV
// in registers over the group's query heads in order and the query tiles from the diagonal on; one kernel
// per (query tile, head, row) accumulates dQ over the key tiles in order. Every gradient element is written
// once by the one thread that summed it in a fixed order, without atomics: a run repeats bitwise.
//
// Precision::Bf16 rounds Q, K, V, dO when a tile is loaded and P, dS when they are stored for their product
// (nearest even), and accumulates in fp32 on CUDA cores (no tensor cores in this version), as the host does.
#include "attention_kernels.hpp"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "cuda_check.hpp"
#include "llmtrain/core/error.hpp"

namespace llmtrain::model::cuda {
namespace {

#define LLMTRAIN_KERNEL_FN __host__ __device__ inline
namespace fast {
#include "../fast_math.inc"
}  // namespace fast
#include "../row_kernels.inc"
#undef LLMTRAIN_KERNEL_FN

using Index = std::int64_t;

constexpr int kTile = 64;                  // queries and keys per tile
constexpr int kSide = 16;                  // threads per side of the block's 16 x 16 grid
constexpr int kThreads = kSide * kSide;    // threads per block
constexpr int kRows = kTile / kSide;       // tile rows (and score columns) per thread
constexpr int kLdScores = kTile + 1;       // row stride of a shared score tile (+1: no bank conflicts)
constexpr int kMaxHeadDim = 128;

struct Dims {
  Index seq, n_heads, n_kv_heads, head_dim, width, group;
  float scale;
  bool bf16;
};

// A product's operand in the run's precision.
__device__ float operand(float x, bool bf16) { return bf16 ? __bfloat162float(__float2bfloat16_rn(x)) : x; }

// Shared [kTile, D + 1] tile = rows [0, rows) x columns [0, head_dim) of a global matrix, zero elsewhere.
template <int D>
__device__ void load_tile(float* tile, const float* src, Index ld, int rows, const Dims& dims) {
  for (int i = threadIdx.x; i < kTile * D; i += kThreads) {
    const int r = i / D, d = i % D;
    tile[r * (D + 1) + d] = r < rows && d < dims.head_dim ? operand(src[r * ld + d], dims.bf16) : 0.0f;
  }
}

// One value per tile row (lse or delta of rows [0, rows)), zero elsewhere.
__device__ void load_rows(float* dst, const float* src, int rows) {
  if (threadIdx.x < kTile) dst[threadIdx.x] = int(threadIdx.x) < rows ? src[threadIdx.x] : 0.0f;
}

// acc[i][j] = a[ty + 16 i, :] . b[tx + 16 j, :] over shared [kTile, D + 1] tiles, d in order.
template <int D>
__device__ void dot_rows(float (&acc)[kRows][kRows], const float* a, const float* b) {
  const int ty = threadIdx.x / kSide, tx = threadIdx.x % kSide;
  for (int i = 0; i < kRows; ++i)
    for (int j = 0; j < kRows; ++j) acc[i][j] = 0;
#pragma unroll 8
  for (int d = 0; d < D; ++d) {
    float av[kRows], bv[kRows];
    for (int i = 0; i < kRows; ++i) av[i] = a[(ty + kSide * i) * (D + 1) + d];
    for (int j = 0; j < kRows; ++j) bv[j] = b[(tx + kSide * j) * (D + 1) + d];
    for (int i = 0; i < kRows; ++i)
      for (int j = 0; j < kRows; ++j) acc[i][j] += av[i] * bv[j];
  }
}

// acc[i][j] += sum over k < n, in order, of p[ty + 16 i, k] * b[k, tx + 16 j] (p is a shared score tile,
// read transposed with kTransposeP; b a shared [kTile, D + 1] tile).
template <int D, bool kTransposeP>
__device__ void accumulate_product(float (&acc)[kRows][D / kSide], const float* p, const float* b, int n) {
  const int ty = threadIdx.x / kSide, tx = threadIdx.x % kSide;
  for (int k = 0; k < n; ++k) {
    float pv[kRows], bv[D / kSide];
    for (int i = 0; i < kRows; ++i)
      pv[i] = kTransposeP ? p[k * kLdScores + ty + kSide * i] : p[(ty + kSide * i) * kLdScores + k];
    for (int j = 0; j < D / kSide; ++j) bv[j] = b[k * (D + 1) + tx + kSide * j];
    for (int i = 0; i < kRows; ++i)
      for (int j = 0; j < D / kSide; ++j) acc[i][j] += pv[i] * bv[j];
  }
}

// Writes a thread's micro-tile rows [0, rows) x columns [0, head_dim) to a global matrix.
template <int D>
__device__ void store_tile(float* dst, Index ld, const float (&acc)[kRows][D / kSide], int rows, const Dims& dims) {
  const int ty = threadIdx.x / kSide, tx = threadIdx.x % kSide;
  for (int i = 0; i < kRows; ++i) {
    const int r = ty + kSide * i;
    for (int j = 0; j < D / kSide; ++j) {
      const int d = tx + kSide * j;
      if (r < rows && d < dims.head_dim) dst[r * ld + d] = acc[i][j];
    }
  }
}

// The query rows of a tile see every key of the key tile: no mask needed (as the host's needs_mask).
__device__ bool needs_mask(Index qs, Index ks, int tk, const std::int32_t* doc) {
  return ks + tk - 1 > qs || doc != nullptr;
}

template <int D>
constexpr std::size_t forward_shared_bytes() {  // Q, K/V, O tiles; scores; row max and sum
  return sizeof(float) * (3 * kTile * (D + 1) + kTile * kLdScores + 2 * kTile);
}

// Block (query tile, head, row); the last query tiles (the most key tiles) start first.
template <int D>
__global__ void __launch_bounds__(kThreads)
    forward_kernel(Dims dims, float* out, float* lse, const float* qkv, const std::int32_t* doc) {
  extern __shared__ float shared[];
  float* q_tile = shared;
  float* kv_tile = q_tile + kTile * (D + 1);  // K, then V over it
  float* o_tile = kv_tile + kTile * (D + 1);
  float* scores = o_tile + kTile * (D + 1);
  float* row_max = scores + kTile * kLdScores;
  float* row_sum = row_max + kTile;

  const Index qs = Index(gridDim.x - 1 - blockIdx.x) * kTile, h = blockIdx.y, b = blockIdx.z;
  const int tq = int(dims.seq - qs < kTile ? dims.seq - qs : kTile);
  const Index kv = h / dims.group, hd = dims.head_dim, W = dims.width, ldo = dims.n_heads * hd;
  const float* base = qkv + b * dims.seq * W;
  const float* k = base + (dims.n_heads + kv) * hd;
  const float* v = base + (dims.n_heads + dims.n_kv_heads + kv) * hd;
  const std::int32_t* row_doc = doc ? doc + b * dims.seq : nullptr;
  const int t = threadIdx.x;

  load_tile<D>(q_tile, base + qs * W + h * hd, W, tq, dims);
  for (int i = t; i < kTile * (D + 1); i += kThreads) o_tile[i] = 0;
  if (t < kTile) {
    row_max[t] = -INFINITY;
    row_sum[t] = 0;
  }
  for (Index ks = 0; ks < qs + tq; ks += kTile) {  // causal: key tiles up to the query tile's end
    const int tk = int(dims.seq - ks < kTile ? dims.seq - ks : kTile);
    __syncthreads();  // the previous tile's products are done with kv_tile and scores
    load_tile<D>(kv_tile, k + ks * W, W, tk, dims);
    __syncthreads();
    float s[kRows][kRows];
    dot_rows<D>(s, q_tile, kv_tile);
    const int ty = t / kSide, tx = t % kSide;
    for (int i = 0; i < kRows; ++i)
      for (int j = 0; j < kRows; ++j) scores[(ty + kSide * i) * kLdScores + tx + kSide * j] = s[i][j];
    __syncthreads();
    load_tile<D>(kv_tile, v + ks * W, W, tk, dims);
    if (t < tq) {  // the online softmax of row t, rescaling its output so far
      float* row = scores + t * kLdScores;
      attention_softmax_row(row, row_max + t, row_sum + t, o_tile + t * (D + 1), Index(tk), hd, dims.scale,
                            qs + t, ks, needs_mask(qs, ks, tk, row_doc), row_doc);
      if (dims.bf16)
        for (int j = 0; j < tk; ++j) row[j] = operand(row[j], true);
    }
    __syncthreads();
    float o[kRows][D / kSide];
    for (int i = 0; i < kRows; ++i)
      for (int j = 0; j < D / kSide; ++j) o[i][j] = o_tile[(ty + kSide * i) * (D + 1) + tx + kSide * j];
    accumulate_product<D, false>(o, scores, kv_tile, tk);
    for (int i = 0; i < kRows; ++i)
      for (int j = 0; j < D / kSide; ++j) o_tile[(ty + kSide * i) * (D + 1) + tx + kSide * j] = o[i][j];
  }
  __syncthreads();
  for (int i = t; i < tq * hd; i += kThreads) {
    const int r = i / int(hd), d = i % int(hd);
    out[(b * dims.seq + qs + r) * ldo + h * hd + d] = o_tile[r * (D + 1) + d] / row_sum[r];
  }
  if (t < tq) lse[(b * dims.n_heads + h) * dims.seq + qs + t] = row_max[t] + logf(row_sum[t]);
}

// delta[b, h, q] = sum over d, in order, of dout * out (as the host, unrounded); one thread per (b, q, h).
__global__ void delta_kernel(Dims dims, Index rows, float* delta, const float* dout, const float* out) {
  const Index i = Index(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows * dims.n_heads) return;
  const Index h = i % dims.n_heads, row = i / dims.n_heads, b = row / dims.seq, q = row % dims.seq;
  const float* dO = dout + i * dims.head_dim;  // [rows, n_heads * head_dim]: head h of `row`
  const float* o = out + i * dims.head_dim;
  float sum = 0;
  for (Index d = 0; d < dims.head_dim; ++d) sum += dO[d] * o[d];
  delta[(b * dims.n_heads + h) * dims.seq + q] = sum;
}

// P and dS of a thread's micro-tile (queries qs + ty + 16 i, keys ks + tx + 16 j) from its scores s and
// dP = dO V^T: p (P, the operand of dV) and ds (dS, the operand of dQ and dK) into shared score tiles.
__device__ void probabilities_and_dscores(float* p_tile, float* ds_tile, const float (&s)[kRows][kRows],
                                          const float (&dp)[kRows][kRows], const float* lse_rows,
                                          const float* delta_rows, Index qs, int tq, Index ks, int tk,
                                          const std::int32_t* row_doc, const Dims& dims) {
  const int ty = threadIdx.x / kSide, tx = threadIdx.x % kSide;
  const bool mask = needs_mask(qs, ks, tk, row_doc);
  for (int i = 0; i < kRows; ++i) {
    const int r = ty + kSide * i;
    for (int j = 0; j < kRows; ++j) {
      const int c = tx + kSide * j;
      float p = 0, ds = 0;  // outside the tiles: no contribution
      if (r < tq && c < tk) {
        p = s[i][j];
        attention_probs_row(&p, lse_rows[r], Index(1), dims.scale, qs + r, ks + c, mask, row_doc);
        ds = dp[i][j];
        attention_dscores_row(&ds, &p, delta_rows[r], Index(1), dims.scale);
      }
      if (p_tile) p_tile[r * kLdScores + c] = operand(p, dims.bf16);
      ds_tile[r * kLdScores + c] = operand(ds, dims.bf16);
    }
  }
}

// Shared memory of the backward kernels: Q, dO, K, V tiles; `score_tiles` score tiles; lse and delta rows.
template <int D>
constexpr std::size_t backward_shared_bytes(int score_tiles) {
  return sizeof(float) * (4 * kTile * (D + 1) + score_tiles * kTile * kLdScores + 2 * kTile);
}

// Block (key tile, kv head, row): dK and dV of the tile's keys, summed over the group's query heads in order
// and, for each, the query tiles from the diagonal on, in order.
template <int D>
__global__ void __launch_bounds__(kThreads)
    backward_dkv_kernel(Dims dims, float* dqkv, const float* dout, const float* lse, const float* delta,
                        const float* qkv, const std::int32_t* doc) {
  extern __shared__ float shared[];
  float* k_tile = shared;
  float* v_tile = k_tile + kTile * (D + 1);
  float* q_tile = v_tile + kTile * (D + 1);
  float* do_tile = q_tile + kTile * (D + 1);
  float* p_tile = do_tile + kTile * (D + 1);
  float* ds_tile = p_tile + kTile * kLdScores;
  float* lse_rows = ds_tile + kTile * kLdScores;
  float* delta_rows = lse_rows + kTile;

  const Index ks = Index(blockIdx.x) * kTile, kv = blockIdx.y, b = blockIdx.z;
  const int tk = int(dims.seq - ks < kTile ? dims.seq - ks : kTile);
  const Index hd = dims.head_dim, W = dims.width, ldo = dims.n_heads * hd;
  const Index base = b * dims.seq * W;
  const std::int32_t* row_doc = doc ? doc + b * dims.seq : nullptr;

  load_tile<D>(k_tile, qkv + base + ks * W + (dims.n_heads + kv) * hd, W, tk, dims);
  load_tile<D>(v_tile, qkv + base + ks * W + (dims.n_heads + dims.n_kv_heads + kv) * hd, W, tk, dims);
  float dk[kRows][D / kSide] = {}, dv[kRows][D / kSide] = {};
  for (Index h = kv * dims.group; h < (kv + 1) * dims.group; ++h) {
    const float* row_lse = lse + (b * dims.n_heads + h) * dims.seq;
    const float* row_delta = delta + (b * dims.n_heads + h) * dims.seq;
    for (Index qs = ks; qs < dims.seq; qs += kTile) {  // causal: the query tiles from the diagonal on
      const int tq = int(dims.seq - qs < kTile ? dims.seq - qs : kTile);
      __syncthreads();  // the previous tile's products are done with q_tile, do_tile, p_tile and ds_tile
      load_tile<D>(q_tile, qkv + base + qs * W + h * hd, W, tq, dims);
      load_tile<D>(do_tile, dout + (b * dims.seq + qs) * ldo + h * hd, ldo, tq, dims);
      load_rows(lse_rows, row_lse + qs, tq);
      load_rows(delta_rows, row_delta + qs, tq);
      __syncthreads();
      float s[kRows][kRows], dp[kRows][kRows];
      dot_rows<D>(s, q_tile, k_tile);
      dot_rows<D>(dp, do_tile, v_tile);
      probabilities_and_dscores(p_tile, ds_tile, s, dp, lse_rows, delta_rows, qs, tq, ks, tk, row_doc, dims);
      __syncthreads();
      accumulate_product<D, true>(dv, p_tile, do_tile, tq);
      accumulate_product<D, true>(dk, ds_tile, q_tile, tq);
    }
  }
  store_tile<D>(dqkv + base + ks * W + (dims.n_heads + kv) * hd, W, dk, tk, dims);
  store_tile<D>(dqkv + base + ks * W + (dims.n_heads + dims.n_kv_heads + kv) * hd, W, dv, tk, dims);
}

// Block (query tile, head, row): dQ of the tile's queries, summed over the key tiles up to the diagonal in
// order; the last query tiles (the most key tiles) start first.
template <int D>
__global__ void __launch_bounds__(kThreads)
    backward_dq_kernel(Dims dims, float* dqkv, const float* dout, const float* lse, const float* delta,
                       const float* qkv, const std::int32_t* doc) {
  extern __shared__ float shared[];
  float* q_tile = shared;
  float* do_tile = q_tile + kTile * (D + 1);
  float* k_tile = do_tile + kTile * (D + 1);
  float* v_tile = k_tile + kTile * (D + 1);
  float* ds_tile = v_tile + kTile * (D + 1);
  float* lse_rows = ds_tile + kTile * kLdScores;
  float* delta_rows = lse_rows + kTile;

  const Index qs = Index(gridDim.x - 1 - blockIdx.x) * kTile, h = blockIdx.y, b = blockIdx.z;
  const int tq = int(dims.seq - qs < kTile ? dims.seq - qs : kTile);
  const Index kv = h / dims.group, hd = dims.head_dim, W = dims.width, ldo = dims.n_heads * hd;
  const Index base = b * dims.seq * W;
  const std::int32_t* row_doc = doc ? doc + b * dims.seq : nullptr;

  load_tile<D>(q_tile, qkv + base + qs * W + h * hd, W, tq, dims);
  load_tile<D>(do_tile, dout + (b * dims.seq + qs) * ldo + h * hd, ldo, tq, dims);
  load_rows(lse_rows, lse + (b * dims.n_heads + h) * dims.seq + qs, tq);
  load_rows(delta_rows, delta + (b * dims.n_heads + h) * dims.seq + qs, tq);
  float dq[kRows][D / kSide] = {};
  for (Index ks = 0; ks < qs + tq; ks += kTile) {  // causal: key tiles up to the query tile's end
    const int tk = int(dims.seq - ks < kTile ? dims.seq - ks : kTile);
    __syncthreads();  // the previous tile's product is done with k_tile and ds_tile
    load_tile<D>(k_tile, qkv + base + ks * W + (dims.n_heads + kv) * hd, W, tk, dims);
    load_tile<D>(v_tile, qkv + base + ks * W + (dims.n_heads + dims.n_kv_heads + kv) * hd, W, tk, dims);
    __syncthreads();
    float s[kRows][kRows], dp[kRows][kRows];
    dot_rows<D>(s, q_tile, k_tile);
    dot_rows<D>(dp, do_tile, v_tile);
    probabilities_and_dscores(nullptr, ds_tile, s, dp, lse_rows, delta_rows, qs, tq, ks, tk, row_doc, dims);
    __syncthreads();
    accumulate_product<D, false>(dq, ds_tile, k_tile, tk);
  }
  store_tile<D>(dqkv + base + qs * W + h * hd, W, dq, tq, dims);
}

Dims dims_of(const AttentionShape& shape, Precision precision) {
  LLMTRAIN_CHECK(shape.head_dim > 0 && shape.head_dim <= kMaxHeadDim, "device attention supports head_dim 1..",
                 kMaxHeadDim, ", not ", shape.head_dim);
  LLMTRAIN_CHECK(shape.n_kv_heads > 0 && shape.n_heads >= shape.n_kv_heads && shape.n_heads % shape.n_kv_heads == 0,
                 "device attention: n_heads ", shape.n_heads, " is not a positive multiple of n_kv_heads ",
                 shape.n_kv_heads);
  LLMTRAIN_CHECK((shape.seq_len + kTile - 1) / kTile <= 0x7fffffff && shape.n_heads <= 65535 && shape.batch <= 65535,
                 "device attention: grid too large (seq_len ", shape.seq_len, ", n_heads ", shape.n_heads, ", batch ",
                 shape.batch, ")");
  return Dims{shape.seq_len,     shape.n_heads, shape.n_kv_heads, shape.head_dim, shape.width(),
              shape.n_heads / shape.n_kv_heads, attention_score_scale<float>(shape), precision == Precision::Bf16};
}

// Launches kernel on a grid of (tiles, heads, batch) with `bytes` of dynamic shared memory (allowed past the
// 48 KiB default after checking the device's limit).
template <typename Kernel, typename... Args>
void launch(Kernel kernel, const char* name, std::size_t bytes, Index heads, const AttentionShape& shape,
            cudaStream_t stream, Args... args) {
  int device = 0, limit = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  check_cuda(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
             "cudaDeviceGetAttribute(MaxSharedMemoryPerBlockOptin)");
  LLMTRAIN_CHECK(bytes <= std::size_t(limit), name, " needs ", bytes, " bytes of shared memory per block for head_dim ",
                 shape.head_dim, "; this device allows ", limit);
  check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)),
             "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
  const dim3 grid(unsigned((shape.seq_len + kTile - 1) / kTile), unsigned(heads), unsigned(shape.batch));
  kernel<<<grid, kThreads, bytes, stream>>>(args...);
  check_launch(name);
}

// The launches for one padded head width D.
template <int D>
struct Forward {
  static void run(const AttentionShape& shape, const Dims& dims, float* out, float* lse, const float* qkv,
                  const std::int32_t* doc, cudaStream_t stream) {
    launch(forward_kernel<D>, "attention forward kernel", forward_shared_bytes<D>(), shape.n_heads, shape, stream,
           dims, out, lse, qkv, doc);
  }
};

template <int D>
struct Backward {
  static void run(const AttentionShape& shape, const Dims& dims, float* dqkv, const float* dout, const float* lse,
                  const float* delta, const float* qkv, const std::int32_t* doc, cudaStream_t stream) {
    launch(backward_dkv_kernel<D>, "attention dK/dV kernel", backward_shared_bytes<D>(2), shape.n_kv_heads, shape,
           stream, dims, dqkv, dout, lse, delta, qkv, doc);
    launch(backward_dq_kernel<D>, "attention dQ kernel", backward_shared_bytes<D>(1), shape.n_heads, shape, stream,
           dims, dqkv, dout, lse, delta, qkv, doc);
  }
};

// Launch<D>::run with D the head width padded to 32, 64 or 128 (dims_of has checked head_dim <= 128).
template <template <int> class Launch, typename... Args>
void with_padded_head_dim(Index head_dim, const Args&... args) {
  if (head_dim <= 32)
    Launch<32>::run(args...);
  else if (head_dim <= 64)
    Launch<64>::run(args...);
  else
    Launch<128>::run(args...);
}

}  // namespace

void attention_forward(const AttentionShape& shape, float* out, float* lse, const float* qkv,
                       const std::int32_t* doc, Precision precision, cudaStream_t stream) {
  const Dims dims = dims_of(shape, precision);
  if (shape.batch * shape.seq_len == 0) return;
  with_padded_head_dim<Forward>(shape.head_dim, shape, dims, out, lse, qkv, doc, stream);
}

std::int64_t attention_backward_workspace_elements(const AttentionShape& shape) {
  return shape.batch * shape.n_heads * shape.seq_len;  // delta
}

void attention_backward(const AttentionShape& shape, float* dqkv, const float* dout, const float* out,
                        const float* lse, const float* qkv, const std::int32_t* doc, float* workspace,
                        Precision precision, cudaStream_t stream) {
  const Dims dims = dims_of(shape, precision);
  const Index rows = shape.batch * shape.seq_len;
  if (rows == 0) return;
  float* delta = workspace;
  constexpr int kDeltaThreads = 256;
  delta_kernel<<<unsigned((rows * shape.n_heads + kDeltaThreads - 1) / kDeltaThreads), kDeltaThreads, 0, stream>>>(
      dims, rows, delta, dout, out);
  check_launch("attention delta kernel");
  with_padded_head_dim<Backward>(shape.head_dim, shape, dims, dqkv, dout, lse, static_cast<const float*>(delta), qkv,
                                 doc, stream);
}

}  // namespace llmtrain::model::cuda
