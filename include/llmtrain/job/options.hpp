// Maps the TOML configuration onto the option structs of the areas: the one place where `[model]`,
// `[tokenizer]`, `[data]` and `[train]` keys meet the model, the loader and the trainer.
#pragma once

#include <optional>
#include <vector>

#include "llmtrain/config/config.hpp"
#include "llmtrain/core/model_config.hpp"
#include "llmtrain/data/loader.hpp"
#include "llmtrain/model/backend.hpp"
#include "llmtrain/model/gemm.hpp"
#include "llmtrain/optim/adamw.hpp"
#include "llmtrain/parallel/store_options.hpp"
#include "llmtrain/tokenizer/tokenizer.hpp"
#include "llmtrain/train/trainer.hpp"

namespace llmtrain::job {

// The tokenizer at tokenizer.path; an error names the configuration file and the key before saying what is
// wrong with the file.
tokenizer::Tokenizer load_tokenizer(const Config& config);

// vocab_size: the tokenizer's size, used when model.vocab_size is 0 (and checked against it otherwise).
ModelConfig model_config(const Config& config, std::int64_t tokenizer_vocab_size);

// Options of a loader over `datasets` (config.data.datasets or config.data.eval_datasets), with BOS/EOS
// from [tokenizer] or, by default, from the tokenizer itself. local_ranks (processes of this node) sizes
// data.threads = 0.
data::LoaderOptions loader_options(const Config& config, const std::vector<DatasetConfig>& datasets,
                                   const tokenizer::Tokenizer& tokenizer, int local_ranks = 1);

// The tokens documents are framed with: [tokenizer]'s bos_token / eos_token (each checked against the
// vocabulary, naming the key), or by default the tokenizer's own (data::set_default_special_tokens).
struct DocumentFraming {
  std::optional<tokenizer::TokenId> bos_id, eos_id;
};
DocumentFraming document_framing(const Config& config, const tokenizer::Tokenizer& tokenizer);

optim::AdamWOptions adamw_options(const Config& config);

// parallel.*: the strategy and its window. Checks that hsdp's shard_group_size divides `world_size`.
parallel::StoreOptions store_options(const Config& config, int world_size);

// train.precision as the products will run on `device`: bf16 only where model::bf16_supported(device);
// otherwise fp32, with a warning in the log that says why.
model::Precision products_precision(const Config& config, model::Device device);

// peak_flops: the per-rank flop/s MFU is reported against (0: no MFU). Logs warmup_warning's warning.
train::TrainOptions train_options(const Config& config, double peak_flops);

// For a run shorter than its warm-up (train.warmup_steps > train.steps), what its learning rate does: it rises
// for the whole run, ends below train.lr (by how much) and never decays. "" otherwise.
std::string warmup_warning(const TrainConfig& train);

}  // namespace llmtrain::job
