// THE schema of llmtrain's configuration: every key, its type, default, range and help text.
// Adding a key means adding one line here and the member it fills in include/llmtrain/core/config.hpp;
// parsing, validation, `--dry-run` output and docs/config.md all follow from this table.
#include "config_schema.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace llmtrain::schema {
namespace {

constexpr double kMaxInt = 9.0e15;  // largest integer bound we state (exact in a double)

// Builds the set/get pair for a member `Section Target::*section` -> `Member Section::*member`.
template <typename Target, typename Section, typename Member>
FieldSpec<Target> bind_member(Section Target::*section, Member Section::*member, FieldSpec<Target> spec) {
  spec.set = [section, member](Target& target, const Value& value) {
    target.*section.*member = std::get<Member>(value);
  };
  spec.get = [section, member](const Target& target) -> Value { return target.*section.*member; };
  return spec;
}

// The same for members of the target itself (dataset tables).
template <typename Target, typename Member>
FieldSpec<Target> bind_member(Member Target::*member, FieldSpec<Target> spec) {
  spec.set = [member](Target& target, const Value& value) { target.*member = std::get<Member>(value); };
  spec.get = [member](const Target& target) -> Value { return target.*member; };
  return spec;
}

template <typename T>
FieldSpec<T> integer(const char* section, const char* key, std::int64_t def, double lo, double hi,
                     const char* help) {
  return {section, key, Kind::Integer, def, false, lo, hi, {}, help, {}, {}};
}
template <typename T>
FieldSpec<T> real(const char* section, const char* key, double def, double lo, double hi, const char* help) {
  return {section, key, Kind::Real, def, false, lo, hi, {}, help, {}, {}};
}
template <typename T>
FieldSpec<T> boolean(const char* section, const char* key, bool def, const char* help) {
  return {section, key, Kind::Boolean, def, false, 0, 0, {}, help, {}, {}};
}
template <typename T>
FieldSpec<T> text(const char* section, const char* key, Kind kind, const char* def, const char* help) {
  return {section, key, kind, std::string(def), false, 0, 0, {}, help, {}, {}};
}
template <typename T>
FieldSpec<T> required(const char* section, const char* key, Kind kind, const char* help) {
  return {section, key, kind, std::string(), true, 0, 0, {}, help, {}, {}};
}
template <typename T>
FieldSpec<T> choice(const char* section, const char* key, const char* def, std::vector<std::string> choices,
                    const char* help) {
  return {section, key, Kind::Choice, std::string(def), false, 0, 0, std::move(choices), help, {}, {}};
}

using C = Config;
using F = FieldSpec<Config>;

}  // namespace

const std::vector<std::pair<std::string, std::string>>& sections() {
  static const std::vector<std::pair<std::string, std::string>> list = {
      {"model", "Shape of the Llama/Granite-style decoder."},
      {"tokenizer", "The Hugging Face tokenizer used to tokenize raw text on the fly."},
      {"data", "The data loader: packing, shuffling, sharding and the datasets."},
      {"train", "Optimisation: steps, batch, AdamW, learning-rate schedule, evaluation."},
      {"parallel", "How ranks share the work and which transport carries tensors."},
      {"checkpoint", "Parallel HDF5 checkpoints of model, optimizer and data-loader state (docs/checkpoints.md). "
                     "With a dir, a run resumes from the newest complete checkpoint there and writes one at its end."},
      {"log", "Console, per-rank and metrics logging."},
  };
  return list;
}

const std::vector<std::pair<std::string, std::string>>& dataset_arrays() {
  static const std::vector<std::pair<std::string, std::string>> list = {
      {"data.datasets", "Training datasets, one [[data.datasets]] table each (at least one)."},
      {"data.eval_datasets", "Held-out datasets for evaluation, one [[data.eval_datasets]] table each."},
  };
  return list;
}

const std::vector<FieldSpec<Config>>& config_fields() {
  static const std::vector<F> fields = {
      bind_member(&C::model, &ModelConfig::vocab_size, integer<C>("model", "vocab_size", 0, 0, 1 << 24,
           "Vocabulary size; 0 takes the tokenizer's size (added tokens included).")),
      bind_member(&C::model, &ModelConfig::d_model, integer<C>("model", "d_model", 768, 8, 65536,
           "Width of the residual stream.")),
      bind_member(&C::model, &ModelConfig::n_layers, integer<C>("model", "n_layers", 12, 1, 1024,
           "Number of transformer blocks.")),
      bind_member(&C::model, &ModelConfig::n_heads, integer<C>("model", "n_heads", 12, 1, 1024,
           "Attention (query) heads; must divide d_model.")),
      bind_member(&C::model, &ModelConfig::n_kv_heads, integer<C>("model", "n_kv_heads", 0, 0, 1024,
           "Key/value heads for grouped-query attention; must divide n_heads; 0 means n_heads.")),
      bind_member(&C::model, &ModelConfig::d_ff, integer<C>("model", "d_ff", 0, 0, 1 << 20,
           "Hidden width of the SwiGLU MLP; 0 applies Llama's rule (8/3 d_model, rounded up to 256).")),
      bind_member(&C::model, &ModelConfig::rope_theta, real<C>("model", "rope_theta", 10000.0, 1.0, 1e9,
           "Base of the rotary position embedding frequencies.")),
      bind_member(&C::model, &ModelConfig::norm_eps, real<C>("model", "norm_eps", 1e-5, 1e-12, 0.1,
           "Epsilon of RMSNorm.")),
      bind_member(&C::model, &ModelConfig::tie_embeddings, boolean<C>("model", "tie_embeddings", false,
           "Share the token embedding with the output head.")),
      bind_member(&C::model, &ModelConfig::init_std, real<C>("model", "init_std", 0.02, 0.0, 1.0,
           "Standard deviation of the normal initialisation of weight matrices.")),
      bind_member(&C::model, &ModelConfig::seed, integer<C>("model", "seed", 1234, 0, kMaxInt,
           "Seed of the weight initialisation.")),
      bind_member(&C::model, &ModelConfig::mask_documents, boolean<C>("model", "mask_documents", false,
           "Mask attention across document boundaries inside a packed row.")),

      bind_member(&C::tokenizer, &TokenizerConfig::path, required<C>("tokenizer", "path", Kind::InputPath,
           "A tokenizer.json file, or a directory holding tokenizer.json, vocab.json + merges.txt, or "
           "encoder.json + vocab.bpe.")),
      bind_member(&C::tokenizer, &TokenizerConfig::bos_token, text<C>("tokenizer", "bos_token", Kind::String, "",
           "Token put before every document; empty takes the tokenizer's post-processor (Llama: <|begin_of_text|>).")),
      bind_member(&C::tokenizer, &TokenizerConfig::eos_token, text<C>("tokenizer", "eos_token", Kind::String, "",
           "Token put after every document; empty takes the post-processor's, else the first of <|endoftext|>, "
           "<|end_of_text|>, </s> in the vocabulary.")),

      bind_member(&C::data, &DataConfig::seq_len, integer<C>("data", "seq_len", 1024, 1, 1 << 20,
           "Tokens per training row (each row carries seq_len + 1 tokens for the shifted targets).")),
      bind_member(&C::data, &DataConfig::seed, integer<C>("data", "seed", 2024, 0, kMaxInt,
           "Seed of the shuffling permutations and of the mixing.")),
      bind_member(&C::data, &DataConfig::logical_shards, integer<C>("data", "logical_shards", 1024, 1, 1 << 24,
           "Parts the corpus is divided into; fixed for a run's lifetime; bounds the number of ranks.")),
      bind_member(&C::data, &DataConfig::shuffle_window, integer<C>("data", "shuffle_window", 256, 1, 1 << 20,
           "Packed rows held per rank for the final local shuffle.")),
      bind_member(&C::data, &DataConfig::block_bytes, integer<C>("data", "block_bytes", 1 << 20, 4096, 1 << 30,
           "Bytes of a read block: the unit of shuffling inside a logical shard and of memory per reader.")),
      bind_member(&C::data, &DataConfig::on_bad_record, choice<C>("data", "on_bad_record", "skip", {"skip", "fail"},
           "What a malformed record (bad JSON, missing field, invalid UTF-8) does: counted and skipped, or fatal.")),
      bind_member(&C::data, &DataConfig::max_bad_fraction, real<C>("data", "max_bad_fraction", 0.01, 0.0, 1.0,
           "Fraction of skipped records (per rank and dataset, checked once 100 records were read) above which skipping becomes an error.")),
      bind_member(&C::data, &DataConfig::threads, integer<C>("data", "threads", 0, 0, 1024,
           "Tokenizing threads per rank; 0: the node's cores divided by its ranks (at least 1). Output does not depend on it.")),
      bind_member(&C::data, &DataConfig::prefetch_rows, integer<C>("data", "prefetch_rows", 64, 0, 1 << 20,
           "Rows a background thread prepares ahead of the trainer; 0: prepared synchronously in next().")),
      bind_member(&C::data, &DataConfig::prefetch_thread, choice<C>("data", "prefetch_thread", "auto", {"auto", "always"},
           "With prefetch_rows > 0: \"auto\" runs the thread only while the trainer's work between batches is worth "
           "overlapping (the thread above a quarter of a batch's make time, the trainer's thread below a tenth, the "
           "mode kept in between), \"always\" from the second batch on.")),
      bind_member(&C::data, &DataConfig::allow_corpus_change, boolean<C>("data", "allow_corpus_change", false,
           "On resume, accept a corpus that changed since the checkpoint (new files join at the next epoch).")),

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
           "stay fp32). bf16 needs AVX512_BF16; without it the run says so and uses fp32.")),
      bind_member(&C::train, &TrainConfig::eval_every, integer<C>("train", "eval_every", 0, 0, kMaxInt,
           "Evaluate on data.eval_datasets every N steps and at the end; 0: only at the end (if there are eval datasets).")),
      bind_member(&C::train, &TrainConfig::eval_batches, integer<C>("train", "eval_batches", 8, 1, 1 << 20,
           "Micro-batches per rank in one evaluation.")),
      bind_member(&C::train, &TrainConfig::run_dir, text<C>("train", "run_dir", Kind::OutputPath, "runs/default",
           "Directory for metrics.jsonl, logs and (by default) checkpoints.")),
      bind_member(&C::train, &TrainConfig::check_memory, boolean<C>("train", "check_memory", true,
           "Refuse to start when the per-rank memory estimate (llmtrain --dry-run) exceeds the memory available to "
           "each rank of the host (its cgroup limit if lower); false starts anyway, with a warning.")),

      bind_member(&C::parallel, &ParallelConfig::backend, choice<C>("parallel", "backend", "auto",
           {"auto", "mpi", "nccl"}, "Transport for tensor collectives; auto is nccl on GPUs, mpi otherwise.")),
      bind_member(&C::parallel, &ParallelConfig::progress_us, integer<C>("parallel", "progress_us", 1000, 0, 1000000,
           "Compute polls communication in flight about every this many microseconds (MPI over TCP advances "
           "only inside MPI calls); float products then run in llmtrain's AVX-512 kernels, which poll between "
           "blocks (on CPUs without AVX-512, large products are split into row panels of about this duration at a "
           "nominal 100 GFLOP/s). Either changes the last bits of those products against OpenBLAS's, "
           "deterministically: results stay a function of the configuration and the CPU's instruction set. 0: no "
           "polling, OpenBLAS products.")),
      bind_member(&C::parallel, &ParallelConfig::strategy, choice<C>("parallel", "strategy", "replicated",
           {"replicated", "fsdp", "hsdp"}, "Data parallelism: every rank holds the whole model (replicated), each "
           "rank holds 1/W of every unit (fsdp), or shard groups of shard_group_size ranks, replicated across "
           "groups (hsdp). docs/parallel.md.")),
      bind_member(&C::parallel, &ParallelConfig::shard_group_size, integer<C>("parallel", "shard_group_size", 0, 0,
           kMaxInt, "hsdp: ranks per shard group (consecutive ranks); must divide the rank count. Ignored otherwise.")),
      bind_member(&C::parallel, &ParallelConfig::max_inflight_units, integer<C>("parallel", "max_inflight_units", 2, 1,
           1024, "K, the rate limiter of fsdp/hsdp: at most K units gathered or being gathered at once (with "
           "reshard_after_forward = false: K gathers in flight); the next gather is issued as soon as a slot "
           "frees. Changes timing and memory, never the numbers.")),
      bind_member(&C::parallel, &ParallelConfig::max_inflight_reductions, integer<C>("parallel",
           "max_inflight_reductions", 2, 1, 1024, "R: at most R gradient reductions (reduce-scatter or all-reduce) in flight at once.")),
      bind_member(&C::parallel, &ParallelConfig::reshard_after_forward, boolean<C>("parallel", "reshard_after_forward",
           true, "fsdp/hsdp: free each unit after its forward and gather it again in backward; false keeps units "
           "gathered from forward to backward (more memory, fewer gathers).")),
      bind_member(&C::parallel, &ParallelConfig::comm_dtype, choice<C>("parallel", "comm_dtype", "fp32",
           {"fp32", "bf16"}, "Element type on the wire: bf16 gathers parameters as bf16 casts of the fp32 master "
           "shards and reduces gradients in bf16 (each hop sums in fp32 and rounds once); master weights and "
           "AdamW state stay fp32.")),
      bind_member(&C::checkpoint, &CheckpointConfig::dir, text<C>("checkpoint", "dir", Kind::OutputPath, "",
           "Directory of step_XXXXXXXX.h5 checkpoints and LATEST; empty: no checkpoints are written.")),
      bind_member(&C::checkpoint, &CheckpointConfig::every_steps, integer<C>("checkpoint", "every_steps", 0, 0, kMaxInt,
           "Write a checkpoint every N optimizer steps; 0: only at the end of the run (and on a stop signal).")),
      bind_member(&C::checkpoint, &CheckpointConfig::on_stop, boolean<C>("checkpoint", "on_stop", true,
           "When a stop signal (SIGTERM, SIGINT, SIGUSR1) ends the run, write a checkpoint after the last step.")),
      bind_member(&C::checkpoint, &CheckpointConfig::keep_last, integer<C>("checkpoint", "keep_last", 3, 0, kMaxInt,
           "Keep the newest N checkpoints and delete older ones (except those keep_every keeps); 0: keep all.")),
      bind_member(&C::checkpoint, &CheckpointConfig::keep_every, integer<C>("checkpoint", "keep_every", 0, 0, kMaxInt,
           "Also keep every checkpoint whose step is a multiple of N, whatever keep_last says; 0: none.")),
      bind_member(&C::checkpoint, &CheckpointConfig::resume, text<C>("checkpoint", "resume", Kind::String, "auto",
           "\"auto\": continue from the newest checkpoint in dir that verifies (falling back to older ones), or start "
           "fresh when there is none; \"never\": start fresh; a path: continue from that file.")),
      bind_member(&C::checkpoint, &CheckpointConfig::alignment, integer<C>("checkpoint", "alignment", 1 << 20, 0, 1 << 30,
           "Datasets of at least half this many bytes start at a multiple of it (the file system's stripe or "
           "block size); 0: no alignment.")),
      bind_member(&C::checkpoint, &CheckpointConfig::file_locking, boolean<C>("checkpoint", "file_locking", false,
           "Use HDF5's file locking (off by default: several parallel file systems do not support it).")),
      bind_member(&C::checkpoint, &CheckpointConfig::timeout_s, real<C>("checkpoint", "timeout_s", 1800, 0, 1e7,
           "A checkpoint write that takes longer ends the job with an error instead of hanging (e.g. a file "
           "system that stopped answering); 0: no limit.")),
      bind_member(&C::log, &LogConfig::level, choice<C>("log", "level", "info", {"debug", "info", "warn", "error"},
           "Least severe message printed.")),
      bind_member(&C::log, &LogConfig::per_rank, boolean<C>("log", "per_rank", false,
           "Also write every rank's messages to <log.dir>/rank-<r>.log (rank 0 always prints).")),
      bind_member(&C::log, &LogConfig::dir, text<C>("log", "dir", Kind::OutputPath, "",
           "Directory of per-rank logs; empty means run_dir.")),
      bind_member(&C::log, &LogConfig::every_steps, integer<C>("log", "every_steps", 1, 1, kMaxInt,
           "Print a progress line every N steps (metrics.jsonl gets every step).")),
      bind_member(&C::log, &LogConfig::trace, boolean<C>("log", "trace", false,
           "Every rank writes a Chrome trace of its steps to <run_dir>/trace.rank<R>.json at the end of the run: "
           "compute on each unit and the waits for communication on one track, every all-gather and gradient "
           "reduction on another (open in https://ui.perfetto.dev). Kept in memory: a few events per unit and "
           "micro-batch.")),
      bind_member(&C::log, &LogConfig::provenance, boolean<C>("log", "provenance", false,
           "Every rank writes the rows it consumed (dataset, file, byte offset, tokens, step) to "
           "<run_dir>/provenance.rank<R>.jsonl, in the format of llmtrain-data simulate --provenance, so the "
           "loader's exactly-once audit can check a training run.")),
  };
  return fields;
}

const std::vector<FieldSpec<DatasetConfig>>& dataset_fields() {
  using D = DatasetConfig;
  static const std::vector<FieldSpec<D>> fields = {
      bind_member(&D::name, required<D>("data.datasets", "name", Kind::String,
           "Unique name of the dataset (it keys the mixing state in checkpoints).")),
      bind_member(&D::path, required<D>("data.datasets", "path", Kind::InputGlob,
           "A file, a directory (walked recursively) or a glob: .jsonl, .jsonl.gz, .jsonl.zst, or .txt (one document per file).")),
      bind_member(&D::weight, real<D>("data.datasets", "weight", 1.0, 1e-9, 1e9,
           "Relative share of tokens drawn from this dataset.")),
      bind_member(&D::field, text<D>("data.datasets", "field", Kind::String, "text",
           "JSON Lines field holding the document text.")),
  };
  return fields;
}

std::string kind_name(Kind kind) {
  switch (kind) {
    case Kind::Integer: return "integer";
    case Kind::Real: return "number";
    case Kind::Boolean: return "boolean";
    case Kind::String: return "string";
    case Kind::Choice: return "string";
    case Kind::InputPath: return "path";
    case Kind::InputGlob: return "path or glob";
    case Kind::OutputPath: return "path";
  }
  return "?";
}

std::string real_to_toml(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  // The shortest digits that read back as the same double ("1.8e+03" for 1800), then written plainly.
  char buffer[64];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific).ptr;
  const std::string scientific(buffer, end);  // [-]d[.ddd]e(+|-)dd
  const std::size_t e = scientific.find('e');
  const bool negative = scientific[0] == '-';
  std::string digits = scientific.substr(negative ? 1 : 0, e - (negative ? 1 : 0));
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  const int exponent = std::stoi(scientific.substr(e + 1));
  std::string out = negative ? "-" : "";
  if (exponent < -4 || exponent > 6) {  // 1e-5, 1e7: the short form where plain digits are hard to count
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    return out + "e" + std::to_string(exponent);
  }
  if (exponent < 0) return out + "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
  const std::size_t whole = static_cast<std::size_t>(exponent) + 1;
  if (digits.size() <= whole) return out + digits + std::string(whole - digits.size(), '0') + ".0";
  return out + digits.substr(0, whole) + "." + digits.substr(whole);
}

std::string string_to_toml(const std::string& text) {
  // A TOML basic string: quote, backslash and every control character escaped (TOML forbids them raw,
  // tab excepted, which is escaped to be seen); other bytes, UTF-8 included, as they are.
  std::string out = "\"";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\f': out += "\\f"; break;
      case '\r': out += "\\r"; break;
      default:
        if (byte < 0x20 || byte == 0x7f) {
          char escape[8];
          std::snprintf(escape, sizeof escape, "\\u%04X", byte);
          out += escape;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string value_to_toml(const Value& value) {
  if (const auto* i = std::get_if<std::int64_t>(&value)) return std::to_string(*i);
  if (const auto* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  if (const auto* d = std::get_if<double>(&value)) return real_to_toml(*d);
  return string_to_toml(std::get<std::string>(value));
}

}  // namespace llmtrain::schema
