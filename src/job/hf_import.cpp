// Hugging Face model directory -> step-0 checkpoint (see hf_import.hpp).
#include "llmtrain/job/hf_import.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <filesystem>
#include <sstream>

#include "llmtrain/ckpt/checkpoint.hpp"
#include "llmtrain/ckpt/directory.hpp"
#include "llmtrain/config/config.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/tokenizer/tokenizer.hpp"

namespace llmtrain::job {
namespace {

namespace fs = std::filesystem;

// The files transformers' tokenizers are made of; those present are copied.
constexpr const char* kTokenizerFiles[] = {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
                                           "vocab.json", "merges.txt", "added_tokens.json"};

// A [section] of to_toml's text, header included, up to the next section, without blank lines.
std::string section_of(const std::string& toml, const std::string& name) {
  std::istringstream in(toml);
  std::string line, out;
  bool inside = false;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == '[') inside = line == "[" + name + "]";
    if (inside && !line.empty()) out += line + "\n";
  }
  return out;
}

// The text of a special token id, when the tokenizer has it as one token of its own.
std::string token_text(const tokenizer::Tokenizer& tok, const std::optional<std::int64_t>& id) {
  if (!id || *id < 0 || *id >= std::int64_t(tok.vocab_size())) return "";
  const std::string text = tok.decode({tokenizer::TokenId(*id)});
  return tok.token_to_id(text) == std::optional<tokenizer::TokenId>(tokenizer::TokenId(*id)) ? text : "";
}

}  // namespace

ImportResult import_hf(const ImportOptions& options, MPI_Comm comm) {
  ImportResult out;
  out.source = ckpt::read_hf_config(options.hf_dir, options.seq_len);
  ModelConfig& model = out.source.model;
  const tokenizer::Tokenizer source_tokenizer = [&] {
    try {
      return tokenizer::Tokenizer::load(options.hf_dir);
    } catch (const Error& e) {
      LLMTRAIN_FAIL(options.hf_dir, ": no tokenizer to import with the model: ", e.what());
    }
  }();
  LLMTRAIN_CHECK(model.vocab_size >= std::int64_t(source_tokenizer.vocab_size()), options.hf_dir,
                 "/config.json: vocab_size: ", model.vocab_size, " is smaller than the tokenizer's vocabulary (",
                 source_tokenizer.vocab_size(), " tokens)");
  std::vector<model::ParamUnit<float>> params = ckpt::read_hf_tensors(out.source);

  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  out.tokenizer_dir = fs::absolute(fs::path(options.output_dir) / "tokenizer").lexically_normal().string();
  out.checkpoint = ckpt::checkpoint_path(options.output_dir, 0);
  std::string failure;
  if (rank == 0) {
    std::error_code ec;
    fs::create_directories(out.tokenizer_dir, ec);
    for (const char* name : kTokenizerFiles) {
      const fs::path from = fs::path(options.hf_dir) / name;
      if (!ec && fs::exists(from)) fs::copy_file(from, fs::path(out.tokenizer_dir) / name, fs::copy_options::overwrite_existing, ec);
    }
    if (ec) failure = cat(out.tokenizer_dir, ": cannot copy the tokenizer there: ", ec.message());
  }
  int failed = failure.empty() ? 0 : 1;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm);
  LLMTRAIN_CHECK(!failed, failure.empty() ? out.tokenizer_dir + ": copying the tokenizer failed on rank 0" : failure);
  const tokenizer::Tokenizer tok = tokenizer::Tokenizer::load(out.tokenizer_dir);

  Config config = default_config();
  config.source_file = options.hf_dir + "/config.json";
  const ModelConfig defaults = config.model;
  config.model = model;
  config.model.init_std = defaults.init_std, config.model.seed = defaults.seed;
  config.model.mask_documents = defaults.mask_documents;
  config.model.max_position_embeddings = out.source.max_position_embeddings;
  config.tokenizer.path = out.tokenizer_dir;
  config.tokenizer.bos_token = token_text(tok, out.source.bos_id);
  config.tokenizer.eos_token = token_text(tok, out.source.eos_id);
  // The [model] and [tokenizer] values come from the source, not from defaults: printed without "# default".
  for (const char* section : {"model", "tokenizer"}) {
    std::istringstream lines(section_of(to_toml(config), section));
    std::string line;
    while (std::getline(lines, line))
      if (const auto eq = line.find(" = "); eq != std::string::npos)
        config.source_lines[cat(section, ".", line.substr(0, eq))] = 0;
  }
  const std::string toml = to_toml(config);
  out.model_toml = section_of(toml, "model");
  out.tokenizer_toml = section_of(toml, "tokenizer");

  ckpt::Contents contents;
  ckpt::Metadata& m = contents.metadata;
  m.world_size = size;
  m.strategy = "replicated";
  m.config = toml;
  m.tokenizer_fingerprint = tok.fingerprint();
  m.code_version = LLMTRAIN_VERSION;
  // Fresh AdamW moments: zeros. The writer only reads them, so every unit of both moments views the start of
  // one zero buffer as large as the largest unit: the import holds the parameters and one unit more.
  std::int64_t largest = 0;
  for (const auto& u : params) largest = std::max<std::int64_t>(largest, std::int64_t(u.flat.size()));
  const Kokkos::View<float*> zero("import.zero_moments", std::size_t(largest));
  std::vector<model::ParamUnit<float>> zeros;
  for (const auto& u : params)
    zeros.push_back({u.layout, Kokkos::subview(zero, std::make_pair(std::size_t(0), u.flat.size())), u.begin});
  contents.params = &params;
  contents.first_moments = &zeros;
  contents.second_moments = &zeros;
  contents.rng = {std::uint64_t(config.model.seed), std::uint64_t(config.data.seed)};
  ckpt::write_checkpoint(out.checkpoint, contents, comm);
  return out;
}

}  // namespace llmtrain::job
