// The [train] section of the configuration schema (schema.hpp): steps, batch, AdamW, the learning-rate
// schedule, precision, the device, evaluation and the run directory. Each entry binds a key to its member of
// TrainConfig.
#include "field_builders.hpp"

namespace llmtrain::schema {

SectionSchema train_section() {
  using C = Config;
  SectionSchema section{"train", "Optimisation: steps, batch, AdamW, learning-rate schedule, evaluation.", {}};
  section.fields = {
      bind_member(&C::train, &TrainConfig::steps, integer<C>("train", "steps", 1000, 1, kMaxInt,
           "Optimizer steps to run.")),
      bind_member(&C::train, &TrainConfig::batch_size, integer<C>("train", "batch_size", 8, 1, 1 << 20,
           "Rows per rank per micro-batch.")),
      bind_member(&C::train, &TrainConfig::grad_accum, integer<C>("train", "grad_accum", 1, 1, 1 << 16,
           "Micro-batches accumulated per optimizer step.")),
      bind_member(&C::train, &TrainConfig::lr, real<C>("train", "lr", 3e-4, 0.0, 10.0, "Peak learning rate.")),
      bind_member(&C::train, &TrainConfig::min_lr, real<C>("train", "min_lr", 3e-5, 0.0, 10.0,
           "Learning rate at the end of the decay; at most lr.")),
      bind_member(&C::train, &TrainConfig::warmup_steps, integer<C>("train", "warmup_steps", 100, 0, kMaxInt,
           "Steps of linear warm-up from 0 to lr. A run shorter than its warm-up (a quick trial with --set train.steps=N) "
           "starts with a warning and keeps rising for all its steps: the learning rate never reaches lr and does not "
           "decay, the first steps of the longer run exactly.")),
      bind_member(&C::train, &TrainConfig::schedule, choice<C>("train", "schedule", "cosine",
           {"cosine", "linear", "constant"}, "Decay after warm-up, from lr to min_lr.")),
      bind_member(&C::train, &TrainConfig::weight_decay, real<C>("train", "weight_decay", 0.1, 0.0, 10.0,
           "AdamW decoupled weight decay of weight matrices.")),
      bind_member(&C::train, &TrainConfig::decay_norms_and_embeddings, boolean<C>("train",
           "decay_norms_and_embeddings", false, "Apply weight decay to norm weights and embeddings too.")),
      bind_member(&C::train, &TrainConfig::beta1, real<C>("train", "beta1", 0.9, 0.0, 0.999999, "AdamW beta1.")),
      bind_member(&C::train, &TrainConfig::beta2, real<C>("train", "beta2", 0.95, 0.0, 0.999999, "AdamW beta2.")),
      bind_member(&C::train, &TrainConfig::eps, real<C>("train", "eps", 1e-8, 0.0, 1.0, "AdamW epsilon.")),
      bind_member(&C::train, &TrainConfig::grad_clip, real<C>("train", "grad_clip", 1.0, 0.0, 1e6,
           "Clip gradients to this global L2 norm; 0 disables clipping.")),
      bind_member(&C::train, &TrainConfig::recompute, choice<C>("train", "recompute", "none", {"none", "blocks"},
           "Activation recomputation: keep all activations, or recompute each block in backward.")),
      bind_member(&C::train, &TrainConfig::precision, choice<C>("train", "precision", "fp32", {"fp32", "bf16"},
           "Matrix products: fp32, or bf16 operands with fp32 accumulation (weights, optimizer state, reductions "
           "stay fp32). bf16 needs AVX512_BF16; without it the run says so and uses fp32. On Intel CPUs bf16 is "
           "slower than fp32 (their bf16 dot products are no faster than fp32 FMAs, and AMX is not used): the run "
           "warns at start-up.")),
      bind_member(&C::train, &TrainConfig::device, choice<C>("train", "device", "auto", {"auto", "cpu", "cuda"},
           "Where the model trains. cuda: one GPU per rank, the node's first rank on device 0, the next on device 1 "
           "(more ranks on a node than GPUs, no GPU, or a build without CUDA: an error on every rank). auto: cuda "
           "where the build has CUDA and every rank has a GPU of its own, else cpu, which rank 0's log says. "
           "parallel.backend = \"auto\" follows it (docs/gpu.md). On cuda: parallel.strategy = \"replicated\", "
           "parallel.comm_dtype = \"fp32\" and train.sample_every = 0 only (others: an error; auto trains on the "
           "CPU). The cuda path is built and compiled but has NOT run on a GPU yet (docs/gpu.md, Status).")),
      bind_member(&C::train, &TrainConfig::eval_every, integer<C>("train", "eval_every", 0, 0, kMaxInt,
           "Evaluate on data.eval_datasets every N steps and at the end; 0: only at the end (if there are eval datasets).")),
      bind_member(&C::train, &TrainConfig::eval_batches, integer<C>("train", "eval_batches", 8, 1, 1 << 20,
           "Micro-batches per rank in one evaluation.")),
      bind_member(&C::train, &TrainConfig::sample_every, integer<C>("train", "sample_every", 0, 0, kMaxInt,
           "Log a greedy continuation of train.sample_prompt every N steps, as llm.c does (every rank takes part: the "
           "parameters are gathered as in a forward pass); 0: never.")),
      bind_member(&C::train, &TrainConfig::sample_prompt, text<C>("train", "sample_prompt", Kind::String, "",
           "The text train.sample_every continues, framed as a document starts (BOS where the tokenizer adds one); "
           "\"\": the document separator alone (BOS, else EOS).")),
      bind_member(&C::train, &TrainConfig::sample_tokens, integer<C>("train", "sample_tokens", 32, 1, 1 << 20,
           "Tokens train.sample_every generates at most (fewer at an EOS or at data.seq_len).")),
      bind_member(&C::train, &TrainConfig::run_dir, text<C>("train", "run_dir", Kind::OutputPath, "runs/default",
           "Directory for metrics.jsonl, logs and (by default) checkpoints.")),
      bind_member(&C::train, &TrainConfig::check_memory, boolean<C>("train", "check_memory", true,
           "Refuse to start when the per-rank memory estimate (llmtrain --dry-run) exceeds the memory available to "
           "each rank of the host (its cgroup limit if lower); false starts anyway, with a warning.")),
  };
  return section;
}

}  // namespace llmtrain::schema
