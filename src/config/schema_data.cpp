// The [data] section of the configuration schema (schema.hpp): the loader's packing, shuffling, sharding and
// threads, and the dataset tables. Each entry binds a key to its member of DataConfig or DatasetConfig.
#include "field_builders.hpp"

namespace llmtrain::schema {

SectionSchema data_section() {
  using C = Config;
  SectionSchema section{"data", "The data loader: packing, shuffling, sharding and the datasets.", {}};
  section.fields = {
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
  };
  return section;
}

const std::vector<std::pair<std::string, std::string>>& dataset_arrays() {
  static const std::vector<std::pair<std::string, std::string>> list = {
      {"data.datasets", "Training datasets, one [[data.datasets]] table each (at least one)."},
      {"data.eval_datasets", "Held-out datasets for evaluation, one [[data.eval_datasets]] table each."},
  };
  return list;
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

}  // namespace llmtrain::schema
