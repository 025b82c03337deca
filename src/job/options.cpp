// Config -> area options. Errors name the configuration key, like those of the parser.
#include "llmtrain/job/options.hpp"

#include "llmtrain/core/error.hpp"
#include "llmtrain/core/log.hpp"
#include "llmtrain/data/tokenizer_encoder.hpp"
#include "llmtrain/optim/schedule.hpp"

namespace llmtrain::job {
namespace {

tokenizer::TokenId special_token(const Config& config, const tokenizer::Tokenizer& tokenizer, const std::string& key,
                      const std::string& token) {
  const auto id = tokenizer.token_to_id(token);
  LLMTRAIN_CHECK(id, config.source_file, ": tokenizer.", key, ": \"", token, "\" is not a token of ", config.tokenizer.path);
  return *id;
}

}  // namespace

tokenizer::Tokenizer load_tokenizer(const Config& config) {
  try {
    return tokenizer::Tokenizer::load(config.tokenizer.path);
  } catch (const Error& e) {
    LLMTRAIN_FAIL(config.source_file, ": tokenizer.path: ", e.what());
  }
}

ModelConfig model_config(const Config& config, std::int64_t tokenizer_vocab_size) {
  const std::int64_t vocab = config.model.vocab_size;
  LLMTRAIN_CHECK(vocab == 0 || vocab >= tokenizer_vocab_size, config.source_file, ": model.vocab_size: ", vocab,
                 " is smaller than the tokenizer's vocabulary (", tokenizer_vocab_size, " tokens in ",
                 config.tokenizer.path, ")");
  return config.model.resolved(tokenizer_vocab_size, config.data.seq_len);
}

data::LoaderOptions loader_options(const Config& config, const std::vector<DatasetConfig>& datasets,
                                   const tokenizer::Tokenizer& tokenizer, int local_ranks) {
  data::LoaderOptions out;
  for (const auto& d : datasets) out.datasets.push_back({d.name, d.path, d.weight, d.field});
  out.seq_len = config.data.seq_len;
  out.seed = static_cast<std::uint64_t>(config.data.seed);
  out.logical_shards = config.data.logical_shards;
  out.shuffle_window = config.data.shuffle_window;
  out.batch_rows = config.train.batch_size;
  out.block_bytes = config.data.block_bytes;
  out.on_bad_record = config.data.on_bad_record == "fail" ? data::BadRecordPolicy::fail : data::BadRecordPolicy::skip;
  out.max_bad_fraction = config.data.max_bad_fraction;
  out.allow_corpus_change = config.data.allow_corpus_change;
  out.threads = config.data.threads > 0 ? config.data.threads : data::default_threads(local_ranks);
  out.prefetch_rows = config.data.prefetch_rows;
  if (config.data.prefetch_thread == "always") out.prefetch_chooser = data::always_prefetch_thread;
  const DocumentFraming framing = document_framing(config, tokenizer);
  out.bos_id = framing.bos_id;
  out.eos_id = framing.eos_id;
  return out;
}

DocumentFraming document_framing(const Config& config, const tokenizer::Tokenizer& tokenizer) {
  data::LoaderOptions defaults;
  data::set_default_special_tokens(tokenizer, defaults);
  DocumentFraming out{defaults.bos_id, defaults.eos_id};
  if (!config.tokenizer.bos_token.empty())
    out.bos_id = special_token(config, tokenizer, "bos_token", config.tokenizer.bos_token);
  if (!config.tokenizer.eos_token.empty())
    out.eos_id = special_token(config, tokenizer, "eos_token", config.tokenizer.eos_token);
  return out;
}

model::Precision products_precision(const Config& config, model::Device device) {
  const model::Precision requested = model::parse_precision(config.train.precision);
  if (requested == model::Precision::Bf16 && device == model::Device::Cuda && !model::bf16_supported(device)) {
    log_warn("train.precision = \"bf16\", but bf16 products need a device of compute capability 8.0 or later: "
             "this one is older, so matrix products run in fp32");
    return model::Precision::Fp32;
  }
  if (requested == model::Precision::Bf16 && device == model::Device::Cpu && !model::bf16_supported(device)) {
    log_warn("train.precision = \"bf16\", but bf16 products need a CPU with AVX512_BF16 (and the host build): "
             "this one has none, so matrix products run in fp32");
    return model::Precision::Fp32;
  }
  if (requested == model::Precision::Bf16 && device == model::Device::Cpu && !model::bf16_slowdown().empty())
    log_warn("train.precision = \"bf16\" is slower than fp32 on this CPU (", model::bf16_slowdown(),
             "); set train.precision = \"fp32\"");
  log_info("matrix products: ", model::precision_name(requested),
           requested == model::Precision::Bf16 ? " operands, fp32 accumulation" : "");
  return requested;
}

optim::AdamWOptions adamw_options(const Config& config) {
  const TrainConfig& t = config.train;
  optim::AdamWOptions out;
  out.beta1 = t.beta1;
  out.beta2 = t.beta2;
  out.eps = t.eps;
  out.weight_decay = t.weight_decay;
  out.decay_norms_and_embeddings = t.decay_norms_and_embeddings;
  return out;
}

parallel::StoreOptions store_options(const Config& config, int world_size) {
  const ParallelConfig& c = config.parallel;
  parallel::StoreOptions out;
  out.strategy = c.strategy;
  if (c.strategy == "hsdp") {
    LLMTRAIN_CHECK(c.shard_group_size >= 1, config.source_file,
                   ": parallel.shard_group_size: strategy hsdp needs the ranks per shard group (0 is the default)");
    LLMTRAIN_CHECK(world_size % c.shard_group_size == 0, config.source_file, ": parallel.shard_group_size: ",
                   c.shard_group_size, " must divide the number of ranks (", world_size,
                   ") into shard groups (strategy hsdp)");
    out.shard_group_size = int(c.shard_group_size);
  }
  out.max_inflight_units = int(c.max_inflight_units);
  out.max_inflight_reductions = int(c.max_inflight_reductions);
  out.reshard_after_forward = c.reshard_after_forward;
  out.comm_dtype = c.comm_dtype == "bf16" ? dist::DType::bf16 : dist::DType::f32;
  return out;
}

std::string warmup_warning(const TrainConfig& t) {
  if (t.warmup_steps <= t.steps) return "";
  // The schedule's warm-up does not depend on the run's length: a short trial follows the longer run's first steps.
  const optim::ScheduleOptions schedule{optim::parse_decay(t.schedule), t.lr, t.min_lr, t.warmup_steps, t.steps};
  return cat("train.warmup_steps = ", t.warmup_steps, " is larger than train.steps = ", t.steps,
             ": the learning rate rises for the whole run and ends at ", optim::learning_rate(schedule, t.steps - 1),
             " (", t.steps, "/", t.warmup_steps, " of train.lr = ", t.lr,
             "), never reaching train.lr nor decaying; set train.warmup_steps to at most ", t.steps,
             " for a warm-up that completes");
}

train::TrainOptions train_options(const Config& config, double peak_flops) {
  const TrainConfig& t = config.train;
  if (const std::string warning = warmup_warning(t); !warning.empty()) log_warn(warning);
  train::TrainOptions out;
  out.steps = t.steps;
  out.grad_accum = t.grad_accum;
  out.grad_clip = t.grad_clip;
  out.schedule.decay = optim::parse_decay(t.schedule);
  out.schedule.lr = t.lr;
  out.schedule.min_lr = t.min_lr;
  out.schedule.warmup_steps = t.warmup_steps;
  out.peak_flops = peak_flops;
  return out;
}

}  // namespace llmtrain::job
