// Parameter and memory arithmetic for the dry run. The counts follow the model's definition exactly
// (embedding, per block: RMSNorm x2, Wq, Wk, Wv, Wo, SwiGLU W1/W3/W2; final RMSNorm; untied head); the
// activation figure is an estimate of what backward keeps per token and is labelled as one.
#include "dry_run_report.hpp"

#include <cstdio>

#include "llmtrain/core/error.hpp"

namespace llmtrain::apps {
namespace {

std::int64_t resolved_d_ff(const ModelConfig& m) {
  if (m.d_ff > 0) return m.d_ff;
  const std::int64_t raw = 8 * m.d_model / 3;
  return (raw + 255) / 256 * 256;
}

std::string bytes(double n) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (n >= 1024 && u < 4) n /= 1024, ++u;
  char text[32];
  std::snprintf(text, sizeof text, "%.2f %s", n, units[u]);
  return text;
}

std::string count(double n) {
  char text[32];
  if (n >= 1e9) std::snprintf(text, sizeof text, "%.2fB", n / 1e9);
  else if (n >= 1e6) std::snprintf(text, sizeof text, "%.2fM", n / 1e6);
  else std::snprintf(text, sizeof text, "%.0f", n);
  return text;
}

}  // namespace

ModelSize model_size(const Config& config, std::int64_t vocab_size) {
  const ModelConfig& m = config.model;
  const std::int64_t d = m.d_model, ff = resolved_d_ff(m);
  const std::int64_t head_dim = d / m.n_heads;
  const std::int64_t kv = (m.n_kv_heads == 0 ? m.n_heads : m.n_kv_heads) * head_dim;
  ModelSize size;
  size.vocab_size = vocab_size;
  size.embedding = vocab_size * d * (m.tie_embeddings ? 1 : 2);
  size.per_block = 2 * d + d * d + 2 * d * kv + d * d + 3 * d * ff;
  size.parameters = size.embedding + m.n_layers * size.per_block + d;
  // Per block and token: residual input, two norm outputs, q, k, v, attention output, projection,
  // gate, up and their product, MLP output; plus per-head softmax statistics.
  const std::int64_t per_block_floats = 7 * d + 2 * kv + 3 * ff + m.n_heads;
  size.activation_floats_per_token =
      config.train.recompute == "blocks" ? m.n_layers * d + per_block_floats : m.n_layers * per_block_floats;
  return size;
}

std::string dry_run_report(const Config& config, const ModelSize& size, int world_size) {
  const double params = static_cast<double>(size.parameters);
  const double tokens_per_micro_batch = static_cast<double>(config.train.batch_size * config.data.seq_len);
  const double activations = 4.0 * size.activation_floats_per_token * tokens_per_micro_batch;
  const double state_replicated = 16.0 * params;  // fp32 weights + gradients + AdamW m and v
  const double state_sharded = state_replicated / world_size;
  const double tokens_global = tokens_per_micro_batch * config.train.grad_accum * world_size;
  std::string out;
  out += cat("model: ", count(params), " parameters (", size.parameters, "): embedding ", count(size.embedding),
             ", ", config.model.n_layers, " blocks x ", count(size.per_block), ", vocabulary ", size.vocab_size, "\n");
  out += cat("batch: ", config.train.batch_size, " rows x ", config.data.seq_len, " tokens per rank, ",
             config.train.grad_accum, " micro-batches per step, ", world_size, " ranks = ",
             count(tokens_global), " tokens per step\n");
  char line[160];
  out += "memory per rank (estimate, float32):\n";
  std::snprintf(line, sizeof line, "  %-62s %12s\n", "weights + gradients + AdamW moments, replicated (data parallel)",
                bytes(state_replicated).c_str());
  out += line;
  std::snprintf(line, sizeof line, "  %-62s %12s\n", cat("the same, fully sharded over ", world_size, " ranks (FSDP)").c_str(),
                bytes(state_sharded).c_str());
  out += line;
  std::snprintf(line, sizeof line, "  %-62s %12s\n",
                cat("activations kept for backward (recompute = \"", config.train.recompute, "\")").c_str(),
                bytes(activations).c_str());
  out += line;
  out += cat("  total: ", bytes(state_replicated + activations), " data parallel, ", bytes(state_sharded + activations),
             " fully sharded\n");
  return out;
}

}  // namespace llmtrain::apps
