// Causal grouped-query attention with the document mask on a CUDA device: one fused kernel per direction,
// online softmax, O(seq) memory (the T x T scores never exist). The device twin of attention.hpp's
// Attention<float>: same layout (qkv [batch*seq, (n_heads + 2 n_kv_heads) * head_dim], out [batch*seq,
// n_heads*head_dim], lse [batch, n_heads, seq], doc [batch*seq] or null), same scale
// (attention_score_scale), every pointer in device memory, launches asynchronous on `stream`.
// Precision::Bf16 rounds the products' operands (Q, K, V, P, dO, dS) to bf16 and accumulates in fp32, as the
// host tiles do. The backward pass adds no floating-point atomics: a run repeats bitwise on one GPU.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "../attention_shape.hpp"
#include "llmtrain/model/gemm.hpp"

namespace llmtrain::model::cuda {

void attention_forward(const AttentionShape& shape, float* out, float* lse, const float* qkv,
                       const std::int32_t* doc, Precision precision, cudaStream_t stream);

// Floats of device scratch attention_backward needs for `shape` (the caller allocates and keeps it).
std::int64_t attention_backward_workspace_elements(const AttentionShape& shape);

// dqkv is overwritten with the gradient with respect to qkv.
void attention_backward(const AttentionShape& shape, float* dqkv, const float* dout, const float* out,
                        const float* lse, const float* qkv, const std::int32_t* doc, float* workspace,
                        Precision precision, cudaStream_t stream);

}  // namespace llmtrain::model::cuda
