// `llmtrain-ckpt import`: a Hugging Face model directory (ckpt/hf_import.hpp reads it) becomes a step-0
// checkpoint that `checkpoint.init_from` starts a run from, and that generate, score and export read.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>

#include "llmtrain/ckpt/hf_import.hpp"

namespace llmtrain::job {

struct ImportOptions {
  std::string hf_dir;
  std::string output_dir;
  std::int64_t seq_len = 0;  // the run's data.seq_len, for the sliding_window check; 0: max_position_embeddings
};

struct ImportResult {
  ckpt::HfModel source;
  std::string checkpoint;      // output_dir/step_00000000.h5
  std::string tokenizer_dir;   // output_dir/tokenizer: the source's tokenizer files, copied
  std::string model_toml;      // the [model] section a run's configuration needs
  std::string tokenizer_toml;  // the [tokenizer] section: the copied tokenizer and the source's bos/eos tokens
};

// Collective over comm (every rank reads the whole model; the checkpoint writer splits the writing); Kokkos
// must be initialised. The
// checkpoint holds the source's parameters, zero AdamW moments at step 0 and no loader state; its saved
// configuration is the default one with the source's [model] (max_position_embeddings included) and a
// [tokenizer] naming the copy beside it, with the source's bos_token_id / eos_token_id as bos_token /
// eos_token. Refused besides read_hf_config's refusals: no tokenizer in hf_dir, and a vocab_size smaller than
// the tokenizer's vocabulary (a larger one, padding, is kept).
ImportResult import_hf(const ImportOptions& options, MPI_Comm comm);

}  // namespace llmtrain::job
