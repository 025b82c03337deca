// Parameter and memory arithmetic for the dry run. The parameter count and the activation figure are the
// model's own (ModelConfig::parameter_count, Model::own_bytes); the sharded strategies add their window of
// gathered units and gradients.
#include "dry_run_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "llmtrain/ckpt/background_writer.hpp"
#include "llmtrain/ckpt/memory_tier.hpp"
#include "llmtrain/core/counted.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/job/options.hpp"
#include "llmtrain/model/model.hpp"
#include "llmtrain/model/param_units.hpp"

namespace llmtrain::job {
namespace {

// The BLAS libraries' device workspaces: cuBLAS's (32 MiB, the size the cuBLAS documentation of
// cublasSetWorkspace gives for compute capability 9.0; 4 MiB before it), and with bf16 products cuBLASLt's
// (kLtWorkspaceBytes of src/model/cuda/gemm_cublas.cpp).
constexpr double kCublasWorkspaceBytes = 32.0 * 1024 * 1024;
constexpr double kCublasLtWorkspaceBytes = 32.0 * 1024 * 1024;

std::string count(double n) {
  char text[32];
  if (n >= 1e9) std::snprintf(text, sizeof text, "%.2fB", n / 1e9);
  else if (n >= 1e6) std::snprintf(text, sizeof text, "%.2fM", n / 1e6);
  else std::snprintf(text, sizeof text, "%.0f", n);
  return text;
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

MemoryEstimate estimate_memory(const Config& config, const ModelConfig& m, int world_size, dist::TensorPlace place) {
  // The sharded stores' window (docs/parallel.md): K gathered units, R + 1 whole-unit gradients (R being
  // reduced, one being computed) with R reduce-scatter outputs, and a tied embedding's whole gradient, which
  // stays out while backward runs. Units are padded to a multiple of the shard group size.
  const ParallelConfig& p = config.parallel;
  const double wire = p.comm_dtype == "bf16" ? 1.5 : 1.0;  // a bf16 landing buffer beside the fp32 unit
  double largest = 0;
  for (const auto& layout : model::unit_layouts(m)) largest = std::max(largest, double(layout.size()));
  const auto window = [&](int shards) {
    const double unit = 4.0 * std::ceil(largest / shards) * shards;
    const double tied = m.tie_embeddings ? 4.0 * double(m.vocab_size) * double(m.d_model) : 0.0;
    return double(p.max_inflight_units) * unit * wire + double(p.max_inflight_reductions + 1) * unit * wire +
           double(p.max_inflight_reductions) * unit / shards + tied;
  };
  MemoryEstimate e;
  e.place = place;
  e.activations = double(model::Model<float>::own_bytes(m, model::parse_recompute(config.train.recompute),
                                                       config.train.batch_size, config.data.seq_len));
  const bool bf16 = config.train.precision == "bf16";
  if (place == dist::TensorPlace::device) {
    // Products with bf16 operands round both operands into device scratch that grows to the largest of each
    // (src/model/cuda/gemm_cublas.cpp): bounded by the largest weight (the head's, or the fused gate and up
    // projection) and the largest activation (a micro-batch's gate and up outputs).
    const double largest_weight = std::max(double(m.vocab_size), 2.0 * double(m.d_ff)) * double(m.d_model);
    const double tokens = double(config.train.batch_size) * double(config.data.seq_len);
    const double largest_activation = tokens * std::max(2.0 * double(m.d_ff), double(m.d_model));
    e.device_workspaces =
        kCublasWorkspaceBytes + (bf16 ? kCublasLtWorkspaceBytes + 2.0 * (largest_weight + largest_activation) : 0.0);
  } else {
    // On an AVX512_BF16 CPU the head's products keep its weight packed as bf16, once per transposition, between
    // steps (docs/model.md); counted wherever the run may land.
    if (bf16) e.head_copies = 2.0 * 2.0 * double(m.vocab_size) * double(m.d_model);
    // Host buffers whichever device trains: they are in the host's estimate only.
    if (!config.checkpoint.dir.empty() && config.checkpoint.async)
      e.checkpoint_staging = ckpt::BackgroundWriter::staging_bytes(m.parameter_count(), world_size);
    if (!config.checkpoint.dir.empty() && config.checkpoint.memory_every_steps > 0)
      e.memory_snapshot = ckpt::memory_part_bytes(m.parameter_count(), world_size);
  }
  e.state_replicated = 16.0 * static_cast<double>(m.parameter_count());  // fp32 weights + gradients + AdamW m and v
  e.fsdp_state = e.state_replicated / world_size;
  e.fsdp_window = window(world_size);
  const int group = int(p.shard_group_size);
  if (group >= 1 && world_size % group == 0) {
    e.hsdp_state = e.state_replicated / group;
    e.hsdp_window = window(group);
  }
  return e;
}

double MemoryEstimate::total(const std::string& strategy) const {
  if (strategy == "fsdp") return fsdp_state + fsdp_window + beside_state();
  if (strategy == "hsdp") return hsdp_state + hsdp_window + beside_state();
  return data_parallel();
}

namespace {

// "estimate, float32 state; window K = 2, R = 2, activations 1.00 GiB (recompute = \"none\")"
std::string estimate_terms(const Config& config, const MemoryEstimate& memory) {
  const ParallelConfig& p = config.parallel;
  return cat("estimate, float32 state; window K = ", p.max_inflight_units, ", R = ", p.max_inflight_reductions,
             ", activations ", format_bytes(memory.activations), " (recompute = \"", config.train.recompute, "\")");
}

// One row per strategy: its state, window and total.
std::string strategy_table(const Config& config, const MemoryEstimate& memory, int world_size) {
  std::string out;
  const auto row = [&out](const std::string& what, double state, double window, double total) {
    char line[200];
    std::snprintf(line, sizeof line, "  %-40s %12s %12s %12s\n", what.c_str(), format_bytes(state).c_str(),
                  format_bytes(window).c_str(), format_bytes(total).c_str());
    out += line;
  };
  char header[200];
  std::snprintf(header, sizeof header, "  %-40s %12s %12s %12s\n", "strategy", "state", "window", "total");
  out += header;
  row("replicated (data parallel)", memory.state_replicated, 0, memory.total("replicated"));
  row(cat("fsdp: fully sharded over ", counted(world_size, "rank")), memory.fsdp_state, memory.fsdp_window,
      memory.total("fsdp"));
  if (memory.hsdp_state > 0)
    row(cat("hsdp: shard groups of ", counted(config.parallel.shard_group_size, "rank")), memory.hsdp_state,
        memory.hsdp_window, memory.total("hsdp"));
  return out;
}

}  // namespace

std::string dry_run_report(const Config& config, const ModelConfig& m, int world_size) {
  const double params = static_cast<double>(m.parameter_count());
  const double tokens_per_micro_batch = static_cast<double>(config.train.batch_size * config.data.seq_len);
  const MemoryEstimate memory = estimate_memory(config, m, world_size);
  const double tokens_global = tokens_per_micro_batch * config.train.grad_accum * world_size;
  std::string out;
  out += cat("model: ", count(params), " parameters (", m.parameter_count(), "), ", m.n_layers, " blocks of width ",
             m.d_model, ", SwiGLU width ", m.d_ff, ", vocabulary ", m.vocab_size, "\n");
  out += cat("batch: ", config.train.batch_size, " rows x ", config.data.seq_len, " tokens per rank, ",
             counted(config.train.grad_accum, "micro-batch", "micro-batches"), " per step, ",
             counted(world_size, "rank"), " = ", count(tokens_global), " tokens per step\n");
  if (const std::string warning = warmup_warning(config.train); !warning.empty()) out += "warning: " + warning + "\n";
  out += cat("memory per rank at ", counted(world_size, "rank"), " (", estimate_terms(config, memory),
             memory.head_copies > 0 ? cat(", bf16 head copies ", format_bytes(memory.head_copies)) : std::string(),
             memory.checkpoint_staging > 0
                 ? cat(", checkpoint staging ", format_bytes(memory.checkpoint_staging), " (checkpoint.async)")
                 : std::string(),
             memory.memory_snapshot > 0
                 ? cat(", memory snapshot buffer ", format_bytes(memory.memory_snapshot), " (checkpoint.memory_every_steps)")
                 : std::string(),
             "):\n");
  out += strategy_table(config, memory, world_size);
  if (config.checkpoint.memory_every_steps > 0 && !config.checkpoint.dir.empty()) {
    const double part = ckpt::memory_part_bytes(m.parameter_count(), world_size);
    out += cat("memory tier (checkpoint.memory_every_steps = ", config.checkpoint.memory_every_steps, "): a part of ",
               format_bytes(part), " per rank (staged in the process, written to checkpoint.memory_dir); the directory "
               "keeps 2 generations of own and buddy parts: ", format_bytes(4 * part), " per rank, ",
               format_bytes(4 * part * world_size), " in all (without buddies, on one node: half)\n");
  }
  out += cat("strategy: ", config.parallel.strategy, "\n");
  return out;
}

std::string device_memory_report(const Config& config, const ModelConfig& m, int world_size) {
  const MemoryEstimate memory = estimate_memory(config, m, world_size, dist::TensorPlace::device);
  return cat("device memory per rank at ", counted(world_size, "rank"), " (on its CUDA device; ",
             estimate_terms(config, memory), ", workspaces ", format_bytes(memory.device_workspaces),
             config.train.precision == "bf16" ? " (cuBLAS, cuBLASLt, bf16 operand copies)" : " (cuBLAS)", "):\n",
             strategy_table(config, memory, world_size));
}

}  // namespace llmtrain::job
