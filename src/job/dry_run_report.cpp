// Parameter and memory arithmetic for the dry run. The parameter count is the model's own
// (ModelConfig::parameter_count); the activation figure estimates what backward keeps per token
// and is labelled as an estimate.
#include "dry_run_report.hpp"

#include <cstdio>

#include "llmtrain/core/error.hpp"

namespace llmtrain::job {
namespace {

std::string count(double n) {
  char text[32];
  if (n >= 1e9) std::snprintf(text, sizeof text, "%.2fB", n / 1e9);
  else if (n >= 1e6) std::snprintf(text, sizeof text, "%.2fM", n / 1e6);
  else std::snprintf(text, sizeof text, "%.0f", n);
  return text;
}

// Floats per token that backward keeps for one block: residual input, two norm outputs, q, k, v,
// attention output and projection, gate, up and their product, MLP output, per-head softmax statistics.
double block_activation_floats(const ModelConfig& m) {
  return 7.0 * m.d_model + 2.0 * m.n_kv_heads * m.head_dim() + 3.0 * m.d_ff + m.n_heads;
}

}  // namespace

std::string format_bytes(double n) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (n >= 1024 && u < 4) n /= 1024, ++u;
  char text[32];
  std::snprintf(text, sizeof text, "%.2f %s", n, units[u]);
  return text;
}

MemoryEstimate estimate_memory(const Config& config, const ModelConfig& m, int world_size) {
  const double tokens_per_micro_batch = static_cast<double>(config.train.batch_size * config.data.seq_len);
  const double per_token = config.train.recompute == "blocks"
                               ? m.n_layers * double(m.d_model) + block_activation_floats(m)
                               : m.n_layers * block_activation_floats(m);
  MemoryEstimate e;
  e.activations = 4.0 * per_token * tokens_per_micro_batch;
  e.state_replicated = 16.0 * static_cast<double>(m.parameter_count());  // fp32 weights + gradients + AdamW m and v
  e.state_sharded = e.state_replicated / world_size;
  return e;
}

std::string dry_run_report(const Config& config, const ModelConfig& m, int world_size) {
  const double params = static_cast<double>(m.parameter_count());
  const double tokens_per_micro_batch = static_cast<double>(config.train.batch_size * config.data.seq_len);
  const MemoryEstimate memory = estimate_memory(config, m, world_size);
  const double tokens_global = tokens_per_micro_batch * config.train.grad_accum * world_size;
  std::string out;
  out += cat("model: ", count(params), " parameters (", m.parameter_count(), "), ", m.n_layers, " blocks of width ",
             m.d_model, ", SwiGLU width ", m.d_ff, ", vocabulary ", m.vocab_size, "\n");
  out += cat("batch: ", config.train.batch_size, " rows x ", config.data.seq_len, " tokens per rank, ",
             config.train.grad_accum, " micro-batches per step, ", world_size, " ranks = ",
             count(tokens_global), " tokens per step\n");
  const auto memory_row = [&out](const std::string& what, double amount) {
    char line[160];
    std::snprintf(line, sizeof line, "  %-62s %12s\n", what.c_str(), format_bytes(amount).c_str());
    out += line;
  };
  out += "memory per rank (estimate, float32):\n";
  memory_row("weights + gradients + AdamW moments, replicated (data parallel)", memory.state_replicated);
  memory_row(cat("the same, fully sharded over ", world_size, " ranks (FSDP)"), memory.state_sharded);
  memory_row(cat("activations kept for backward (recompute = \"", config.train.recompute, "\")"), memory.activations);
  out += cat("  total: ", format_bytes(memory.data_parallel()), " data parallel, ",
             format_bytes(memory.fully_sharded()), " fully sharded\n");
  return out;
}

}  // namespace llmtrain::job
