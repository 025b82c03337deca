// The run configuration: one TOML file with sections [model] [tokenizer] [data] [train] [parallel]
// [checkpoint] [log], parsed into plain structs.
//
// Names, types, defaults, ranges and help texts are defined once, in the schema (src/config/schema_*.cpp);
// the structs below carry no defaults of their own. docs/config.md is generated from the same schema
// (`llmtrain --config-reference`) and a test keeps the two in step.
//
// Relative paths written in a file are resolved against the directory of that file; default paths
// (train.run_dir) stay relative to the working directory.
//
// Overrides ("--set section.key=value" on the command line) replace or add values after the file is parsed
// and before anything is checked, so they are validated like the file and conflicts see the final values.
// Their relative paths resolve against the working directory.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "llmtrain/core/model_config.hpp"

namespace llmtrain {

struct TokenizerConfig {
  std::string path;
  std::string bos_token;  // "": from the tokenizer
  std::string eos_token;
};

struct DatasetConfig {
  std::string name;
  std::string path;
  double weight;
  std::string field;
};

struct DataConfig {
  std::int64_t seq_len;
  std::int64_t seed;
  std::int64_t logical_shards;
  std::int64_t shuffle_window;
  std::int64_t block_bytes;
  std::string on_bad_record;
  double max_bad_fraction;
  std::int64_t threads;
  std::int64_t prefetch_rows;
  std::string prefetch_thread;  // "auto" | "always"
  bool allow_corpus_change;
  std::vector<DatasetConfig> datasets;
  std::vector<DatasetConfig> eval_datasets;
};

struct TrainConfig {
  std::int64_t steps;
  std::int64_t batch_size;  // rows per rank per micro-batch
  std::int64_t grad_accum;
  double lr;
  double min_lr;
  std::int64_t warmup_steps;
  std::string schedule;
  double weight_decay;
  bool decay_norms_and_embeddings;
  double beta1;
  double beta2;
  double eps;
  double grad_clip;
  std::string recompute;
  std::string precision;
  std::string device;  // "auto" | "cpu" | "cuda": where the model trains (job/device_choice.hpp)
  std::int64_t eval_every;
  std::int64_t eval_batches;
  std::int64_t sample_every;
  std::string sample_prompt;
  std::int64_t sample_tokens;
  std::string run_dir;
  bool check_memory;
};

struct ParallelConfig {
  std::string backend;
  std::int64_t progress_us;
  std::string strategy;
  std::int64_t shard_group_size;
  std::int64_t max_inflight_units;
  std::int64_t max_inflight_reductions;
  bool reshard_after_forward;
  std::string comm_dtype;
  double collective_timeout_s;
};

struct CheckpointConfig {
  std::string dir;
  std::int64_t every_steps;
  bool on_stop;
  std::int64_t keep_last;
  std::int64_t keep_every;
  std::string resume;  // "auto", "never" or a path
  std::string init_from;  // a checkpoint whose parameters a run starts from when resume finds none ("": none)
  std::int64_t alignment;
  bool file_locking;
  double timeout_s;
  bool async;  // write in the background from a snapshot (ckpt/background_writer.hpp)
  std::int64_t memory_every_steps;  // the memory tier (ckpt/memory_tier.hpp); 0: off
  std::string memory_dir;           // "": under /dev/shm, keyed by the run (job::memory_dir)
};

struct LogConfig {
  std::string level;
  bool per_rank;
  std::string dir;
  std::int64_t every_steps;
  bool trace;
  bool provenance;
};

struct Config {
  ModelConfig model;
  TokenizerConfig tokenizer;
  DataConfig data;
  TrainConfig train;
  ParallelConfig parallel;
  CheckpointConfig checkpoint;
  LogConfig log;

  std::string source_file;                    // the TOML file it came from ("" for defaults)
  std::map<std::string, int> source_lines;    // "section.key" -> line in source_file, for messages
  std::map<std::string, std::string> overrides;  // "section.key" (datasets: "data.datasets[i].key") -> the
                                                // "--set ..." that gave its value
};

// A configuration with every schema default applied (required keys left empty).
Config default_config();

// Reads the file (a regular file of at most 16 MiB), applies `overrides` ("section.key=value" or
// "data.datasets.NAME.key=value", later ones winning; values typed by the schema, quotes optional), then
// defaults, validates and resolves paths. Throws llmtrain::Error with "file:line: key: problem", or
// "--set section.key=value: problem" for a value an override gave, for an unreadable file, syntax errors,
// unknown keys (with a "did you mean"), wrong types, out-of-range values, missing referenced files and
// conflicting settings.
Config load_config(const std::string& path, const std::vector<std::string>& overrides = {});
// The same for text in memory; source_name is used in messages and the file's paths resolve against base_dir.
Config parse_config(const std::string& toml_text, const std::string& source_name, const std::string& base_dir,
                    const std::vector<std::string>& overrides = {});

// The resolved configuration, defaults included, as TOML that load_config accepts again.
std::string to_toml(const Config& config);

// The schema as Markdown: docs/config.md is this text.
std::string config_reference_markdown();

}  // namespace llmtrain
