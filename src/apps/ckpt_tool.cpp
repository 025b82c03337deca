// llmtrain-ckpt: checkpoints from the command line (docs/checkpoints.md).
//
//   llmtrain-ckpt list DIR [--memory MEMDIR]       checkpoints in DIR, oldest first, LATEST marked, unreadable
//                                                  (truncated, corrupt) ones marked; with --memory, also the
//                                                  memory tier's generations in MEMDIR (a node's
//                                                  checkpoint.memory_dir, which a run logs at its start)
//   llmtrain-ckpt inspect CKPT                     attributes and datasets (type, shape, bytes, checksum)
//   llmtrain-ckpt verify CKPT                      recomputes every checksum; exit 1 on a mismatch
//   llmtrain-ckpt loader-state CKPT --output DIR
//                                                  the loader's state as llmtrain-data reads it (rank-*.state)
//   llmtrain-ckpt export CKPT --format safetensors --output DIR [--dtype bf16|fp32] [--tokenizer PATH]
//                                                  [--max-shard-bytes N]
//                                                  Hugging Face Llama tensors, config.json,
//                                                  generation_config.json and the tokenizer
//   llmtrain-ckpt import HF_DIR --output DIR [--seq-len N]
//                                                  a Hugging Face Llama / Mistral / Granite directory as
//                                                  DIR/step_00000000.h5 (for checkpoint.init_from), its
//                                                  tokenizer copied to DIR/tokenizer; prints the [model] section
//
// Runs on one process or under mpirun: verify and export share the reading among the ranks.
#include <Kokkos_Core.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <toml++/toml.h>
#include <vector>

#include "llmtrain/ckpt/checkpoint.hpp"
#include "llmtrain/ckpt/directory.hpp"
#include "llmtrain/ckpt/export.hpp"
#include "llmtrain/ckpt/memory_tier.hpp"
#include "llmtrain/core/counted.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/core/quoted.hpp"
#include "llmtrain/core/timer.hpp"
#include "llmtrain/data/simulate.hpp"
#include "llmtrain/dist/spmd_main.hpp"
#include "llmtrain/job/hf_import.hpp"
#include "llmtrain/job/options.hpp"
#include "llmtrain/tokenizer/hf_export.hpp"

namespace {

using namespace llmtrain;

const char* const kUsage =
    "usage: llmtrain-ckpt list DIR [--memory MEMDIR]\n"
    "       llmtrain-ckpt inspect CKPT\n"
    "       llmtrain-ckpt verify CKPT\n"
    "       llmtrain-ckpt loader-state CKPT --output DIR\n"
    "       llmtrain-ckpt export CKPT --format safetensors --output DIR [--dtype bf16|fp32] [--tokenizer PATH]\n"
    "                     [--max-shard-bytes N]\n"
    "       llmtrain-ckpt import HF_DIR --output DIR [--seq-len N]\n"
    "export writes model.safetensors (above N bytes, default 5000000000: shards and their index), config.json,\n"
    "generation_config.json, tokenizer.json and tokenizer_config.json; the tokenizer is the checkpoint's\n"
    "tokenizer.path unless --tokenizer names another with the same vocabulary.\n"
    "import reads config.json, model.safetensors (or its shards) and the tokenizer of a LlamaForCausalLM,\n"
    "MistralForCausalLM or GraniteForCausalLM and writes DIR/step_00000000.h5 with its tokenizer beside it;\n"
    "--seq-len is the run's data.seq_len, checked against a sliding_window (default: max_position_embeddings).\n";

struct Args {
  std::string command, target, output, format, dtype = "fp32", tokenizer, memory;
  std::uint64_t max_shard_bytes = ckpt::ExportOptions{}.max_shard_bytes;
  std::int64_t seq_len = 0;
};

// A positive integer option's value.
std::uint64_t positive(const std::string& option, const std::string& v, const char* what) {
  LLMTRAIN_CHECK(!v.empty() && v.find_first_not_of("0123456789") == std::string::npos && v.size() < 19 && std::stoull(v) > 0,
                 option, ": expected a positive number of ", what, ", got '", v, "'");
  return std::stoull(v);
}

Args parse(int argc, char** argv) {
  LLMTRAIN_CHECK(argc >= 3, argc < 2 ? "no command given" : "expected a file or directory after the command", "\n", kUsage);
  Args a;
  a.command = argv[1], a.target = argv[2];
  for (int i = 3; i < argc; ++i) {
    const std::string option = argv[i];
    auto value = [&]() -> std::string {
      LLMTRAIN_CHECK(i + 1 < argc, option, ": expected a value\n", kUsage);
      return argv[++i];
    };
    if (option == "--output") a.output = value();
    else if (option == "--format") a.format = value();
    else if (option == "--dtype") a.dtype = value();
    else if (option == "--tokenizer") a.tokenizer = value();
    else if (option == "--memory") a.memory = value();
    else if (option == "--max-shard-bytes") a.max_shard_bytes = positive(option, value(), "bytes");
    else if (option == "--seq-len") a.seq_len = std::int64_t(positive(option, value(), "tokens"));
    else LLMTRAIN_FAIL("unknown option '", option, "'\n", kUsage);
  }
  return a;
}

// Each file is opened (HDF5 checks its recorded end of file, so a truncated copy fails) and its metadata read;
// `verify` is what recomputes the checksums.
int list(const Args& a) {
  std::string latest;
  std::ifstream(a.target + "/LATEST") >> latest;
  const auto entries = ckpt::list_checkpoints(a.target);
  LLMTRAIN_CHECK(std::filesystem::is_directory(a.target), a.target, ": not a directory");
  std::size_t unusable = 0;
  for (const auto& e : entries) {
    std::string problem;
    try {
      const ckpt::Reader opened(e.path, MPI_COMM_SELF);
    } catch (const Error& error) {
      problem = error.what();
      ++unusable;
    }
    std::cout << e.step << "\t" << std::filesystem::file_size(e.path) << " bytes\t" << e.path
              << (std::filesystem::path(e.path).filename() == latest ? "\t(LATEST)" : "")
              << (problem.empty() ? "" : "\tINCOMPLETE OR CORRUPT: " + problem) << "\n";
  }
  std::cout << counted(entries.size() - unusable, "complete checkpoint");
  if (unusable > 0) std::cout << ", " << unusable << " incomplete or corrupt (a resume skips them)";
  std::cout << "\n";
  if (a.memory.empty()) return 0;
  // The memory tier: files are counted, not verified (a resume verifies each part's checksum). A generation is
  // complete when every saving rank's part is on some node: a node's directory holds its ranks' parts and
  // the buddy copies of the previous node's.
  LLMTRAIN_CHECK(std::filesystem::is_directory(a.memory), a.memory, ": not a directory (--memory)");
  const auto generations = ckpt::list_memory_generations(a.memory);
  for (const auto& g : generations)
    std::cout << g.step << "\tmemory\t" << g.parts.size() << " parts, " << g.buddy_parts.size() << " buddy parts\t"
              << g.bytes << " bytes\t" << a.memory << "\n";
  std::cout << counted(generations.size(), "memory snapshot generation") << " in " << a.memory << "\n";
  return 0;
}

// The checkpoint's tokenizer (or --tokenizer's, with the same vocabulary) and the tokens its documents
// were framed with, read from the saved configuration: its datasets need not exist any more.
int export_model(const Args& a, ckpt::Reader& reader, bool speak) {
  toml::table saved;
  try {
    saved = toml::parse(reader.metadata().config);
  } catch (const toml::parse_error& e) {
    LLMTRAIN_FAIL(a.target, ": the saved configuration does not parse: ", e.description());
  }
  Config config = default_config();
  config.source_file = a.target + " (its saved configuration)";
  config.tokenizer.path = a.tokenizer.empty() ? saved["tokenizer"]["path"].value_or(std::string()) : a.tokenizer;
  // An import's tokenizer lies beside its checkpoint: it moves with the directory.
  const auto beside = std::filesystem::path(a.target).parent_path() / "tokenizer";
  if (a.tokenizer.empty() && !std::filesystem::exists(config.tokenizer.path) &&
      std::filesystem::exists(beside / "tokenizer.json"))
    config.tokenizer.path = beside.string();
  config.tokenizer.bos_token = saved["tokenizer"]["bos_token"].value_or(std::string());
  config.tokenizer.eos_token = saved["tokenizer"]["eos_token"].value_or(std::string());
  tokenizer::Tokenizer tok = [&] {
    try {
      return tokenizer::Tokenizer::load(config.tokenizer.path);
    } catch (const Error& e) {
      LLMTRAIN_FAIL("export: the checkpoint's tokenizer cannot be loaded (", e.what(),
                    "); name one with --tokenizer PATH");
    }
  }();
  if (!a.tokenizer.empty() && tok.fingerprint() != reader.metadata().tokenizer_fingerprint) {
    const auto vocab = saved["model"]["vocab_size"].value<std::int64_t>();
    LLMTRAIN_CHECK(!vocab || *vocab == 0 || std::int64_t(tok.vocab_size()) <= *vocab, "export: --tokenizer ", a.tokenizer,
                   " has ", tok.vocab_size(), " tokens, more than the checkpoint's model.vocab_size = ", *vocab);
    if (speak) std::cerr << "note: --tokenizer " << a.tokenizer << " is not the tokenizer the checkpoint was trained with\n";
  }
  const job::DocumentFraming framing = job::document_framing(config, tok);
  ckpt::ExportOptions options;
  options.output_dir = a.output;
  options.bf16 = a.dtype == "bf16";
  options.max_shard_bytes = a.max_shard_bytes;
  if (framing.bos_id) options.bos_id = *framing.bos_id, options.bos_token = tok.decode({*framing.bos_id});
  if (framing.eos_id) options.eos_id = *framing.eos_id, options.eos_token = tok.decode({*framing.eos_id});
  options.tokenizer_json = tokenizer::hf_tokenizer_json(config.tokenizer.path);
  const ckpt::ExportResult written = ckpt::export_safetensors(reader, options);
  const std::size_t shards = written.tensor_files.size();
  if (speak)
    std::cout << "wrote " << a.output << "/" << written.tensor_files.front()
              << (shards > 1 ? " and " + counted(shards - 1, "more shard") : "") << " ("
              << written.tensor_bytes << " bytes of " << a.dtype << " tensors), config.json, generation_config.json "
              << "and the tokenizer (" << config.tokenizer.path << ", as tokenizer.json)\n";
  return 0;
}

// What a run's configuration needs to start from the import follows the summary.
int import_model(const Args& a, dist::Runtime& runtime) {
  LLMTRAIN_CHECK(!a.output.empty(), "import: --output DIR is required\n", kUsage);
  const job::ImportResult r = [&] {
    Kokkos::ScopeGuard kokkos;  // the parameters are held in Kokkos views on their way to the checkpoint
    return job::import_hf({a.target, a.output, a.seq_len}, runtime.comm());
  }();
  if (runtime.rank() != 0) return 0;
  const ModelConfig& m = r.source.model;
  std::cout << "wrote " << r.checkpoint << " (" << r.source.architecture << ", " << m.parameter_count()
            << " parameters" << (r.source.dtype.empty() ? "" : ", " + r.source.dtype + " source")
            << ") and its tokenizer in " << r.tokenizer_dir << "\n\n# To continue pre-training from it:\n"
            << r.model_toml << "\n" << r.tokenizer_toml << "\n[checkpoint]\ninit_from = " << quoted(std::filesystem::absolute(r.checkpoint).lexically_normal().string()) << "\n";
  return 0;
}

int inspect(const Args& a, ckpt::Reader& reader) {
  const ckpt::Metadata& m = reader.metadata();
  std::vector<ckpt::DatasetInfo> sets = reader.datasets();
  std::cout << reader.path() << "\n  step " << m.step << "\n  tokens_seen " << m.tokens_seen << "\n  world_size "
            << m.world_size << "\n  strategy " << m.strategy << "\n  format_version " << m.format_version
            << "\n  code_version " << m.code_version << "\n  tokenizer_fingerprint " << m.tokenizer_fingerprint
            << "\n  corpus " << m.corpus << "  config (" << m.config.size() << " bytes of TOML)\n";
  std::uint64_t total = 0;
  for (const auto& d : sets) {
    std::uint64_t n = 1;
    std::string shape;
    for (auto s : d.shape) n *= s, shape += (shape.empty() ? "" : "x") + std::to_string(s);
    const std::uint64_t bytes = n * (d.type == "f32" ? 4 : d.type == "u8" ? 1 : 8);
    total += bytes;
    std::cout << "  " << d.name << "\t" << d.type << "[" << shape << "]\t" << bytes << " bytes\tchecksum " << d.checksum << "\n";
  }
  std::cout << counted(sets.size(), "dataset") << ", " << total << " bytes of data\n";
  (void)a;
  return 0;
}

int run(int argc, char** argv, dist::Runtime& runtime) {
  const Args a = parse(argc, argv);
  const bool speak = runtime.rank() == 0;
  if (a.command == "list") return speak ? list(a) : 0;
  if (a.command == "import") return import_model(a, runtime);
  if (a.command != "inspect" && a.command != "verify" && a.command != "loader-state" && a.command != "export")
    LLMTRAIN_FAIL("unknown command '", a.command, "'\n", kUsage);
  if (a.command == "export") {  // the options before the file, which may be large
    LLMTRAIN_CHECK(!a.format.empty(), "export: --format is required (formats: safetensors)\n", kUsage);
    LLMTRAIN_CHECK(a.format == "safetensors", "export: --format must be safetensors, got '", a.format, "'\n", kUsage);
    LLMTRAIN_CHECK(a.dtype == "bf16" || a.dtype == "fp32", "export: --dtype must be bf16 or fp32, got '", a.dtype, "'");
  }
  ckpt::Reader reader(a.target, runtime.comm());
  if (a.command == "inspect") return speak ? inspect(a, reader) : 0;
  if (a.command == "verify") {
    const Stopwatch watch;
    reader.verify();
    if (speak) std::cout << a.target << ": every dataset verifies (" << watch.seconds() << " s)\n";
    return 0;
  }
  LLMTRAIN_CHECK(!a.output.empty(), a.command, ": --output DIR is required\n", kUsage);
  if (a.command == "loader-state") {
    const auto states = reader.loader_states();
    LLMTRAIN_CHECK(!states.empty(), a.target, ": no loader state");
    if (speak) {
      std::filesystem::create_directories(a.output);
      for (std::size_t r = 0; r < states.size(); ++r) data::save_state_file(a.output, int(r), states[r]);
      std::cout << "wrote " << counted(states.size(), "state file") << " to " << a.output << " (llmtrain-data simulate --load-state "
                << a.output << ")\n";
    }
    return 0;
  }
  return export_model(a, reader, speak);
}

}  // namespace

int main(int argc, char** argv) {
  return dist::run_spmd_tool(argc, argv, kUsage, [&](dist::Runtime& runtime) { return run(argc, argv, runtime); });
}
