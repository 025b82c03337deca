// Tokenizer::load: finds the tokenizer files, parses them and assembles Tokenizer::Impl.
//
// Accepted: a tokenizer.json file; a directory holding tokenizer.json, or vocab.json + merges.txt, or
// GPT-2's original encoder.json + vocab.bpe. The last two get GPT-2's pipeline (what Hugging Face's GPT-2
// tokenizer.json says): ByteLevel pre-tokenizer with its regex and no prefix space, ByteLevel decoder, and
// "<|endoftext|>" as a special added token when the vocabulary has it.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "components.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/core/hash.hpp"
#include "llmtrain/core/printable.hpp"
#include "source_files.hpp"
#include "tokenizer_impl.hpp"
#include "unicode.hpp"

namespace llmtrain::tokenizer {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  LLMTRAIN_CHECK(in, path, ": cannot open tokenizer file");
  std::ostringstream s;
  s << in.rdbuf();
  LLMTRAIN_CHECK(!in.bad(), path, ": read error");
  return s.str();
}

std::vector<MergeLine> merge_lines(const std::string& merges_txt) {
  std::vector<MergeLine> out;
  std::istringstream lines(merges_txt);
  std::string line;
  for (std::size_t number = 1; std::getline(lines, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line.rfind("#version", 0) == 0) continue;
    out.push_back({number, line});
  }
  return out;
}

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

json parse_json(const std::string& text, const std::string& where) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    LLMTRAIN_FAIL(where, ": malformed JSON: ", printable(e.what()));
  }
}

std::vector<std::pair<std::string, TokenId>> parse_vocab(const json& j, const std::string& where) {
  LLMTRAIN_CHECK(j.is_object(), where, ": the vocabulary must be a JSON object of token -> id");
  std::vector<std::pair<std::string, TokenId>> vocab;
  vocab.reserve(j.size());
  for (auto it = j.begin(); it != j.end(); ++it) {
    LLMTRAIN_CHECK(it.value().is_number_integer(), where, ": vocabulary token '", it.key(), "' has a non-integer id");
    vocab.emplace_back(it.key(), it.value().get<TokenId>());
  }
  return vocab;
}

std::pair<std::string, std::string> split_merge(const std::string& line, const std::string& where, std::size_t n) {
  const std::size_t space = line.find(' ');
  LLMTRAIN_CHECK(space != std::string::npos && line.find(' ', space + 1) == std::string::npos, where, ": merge ",
                 n, " '", line, "' is not two tokens separated by one space");
  return {line.substr(0, space), line.substr(space + 1)};
}

void check_supported_model(const json& model, const std::string& where) {
  const std::string type = model.value("type", "BPE");
  LLMTRAIN_CHECK(type == "BPE", where, ": unsupported model type '", type, "' (only BPE)");
  const json dropout = model.value("dropout", json());
  LLMTRAIN_CHECK(dropout.is_null() || dropout.get<double>() == 0.0, where, ": BPE dropout is not supported");
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    const json v = model.value(key, json());
    LLMTRAIN_CHECK(v.is_null() || v.get<std::string>().empty(), where, ": BPE ", key, " is not supported");
  }
}

}  // namespace

void load_tokenizer_json(const std::string& text, const std::string& where, Tokenizer::Impl& impl) {
  // A path at some other file (a dataset, a model file) is told what was expected, not only what failed.
  const char* const kExpected = "; expected a Hugging Face tokenizer.json, or a directory with tokenizer.json, "
                                "vocab.json + merges.txt, or encoder.json + vocab.bpe";
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {
    LLMTRAIN_FAIL(where, ": not a tokenizer file: malformed JSON (", printable(e.what()), ")", kExpected);
  }
  try {
    LLMTRAIN_CHECK(root.is_object() && root.contains("model"), where,
                   ": not a tokenizer file: JSON without the tokenizer's \"model\"", kExpected);
    for (const char* key : {"truncation", "padding"})
      LLMTRAIN_CHECK(root.value(key, json()).is_null(), where, ": \"", key,
                     "\" is set; llmtrain does not truncate or pad, remove it from the file");
    const json& model = root["model"];
    check_supported_model(model, where);
    std::vector<std::pair<std::string, std::string>> merges;
    const json& merge_list = model.at("merges");
    merges.reserve(merge_list.size());
    for (const json& m : merge_list) {
      if (m.is_string()) merges.push_back(split_merge(m.get<std::string>(), where, merges.size()));
      else merges.emplace_back(m.at(0).get<std::string>(), m.at(1).get<std::string>());
    }
    const json pre = root.value("pre_tokenizer", json());
    BpeOptions options;
    options.byte_level = uses_byte_level(pre);
    options.byte_fallback = model.value("byte_fallback", false);
    options.fuse_unk = model.value("fuse_unk", false);
    options.ignore_merges = model.value("ignore_merges", false);
    if (model.contains("unk_token") && !model["unk_token"].is_null()) options.unk_token = model["unk_token"].get<std::string>();
    impl.model = std::make_unique<BpeModel>(parse_vocab(model.at("vocab"), where), merges, options, where);

    if (!root.value("normalizer", json()).is_null()) impl.normalizer = build_normalizer(root["normalizer"], where);
    if (!pre.is_null()) impl.pre_tokenizer = build_pre_tokenizer(pre, where);
    if (!root.value("decoder", json()).is_null()) impl.decoder = build_decoder(root["decoder"], where);
    if (!root.value("post_processor", json()).is_null())
      build_post_processor(root["post_processor"], where, impl.prefix, impl.suffix);
    for (const json& t : root.value("added_tokens", json::array())) {
      AddedToken token;
      token.content = t.at("content").get<std::string>();
      token.id = t.at("id").get<TokenId>();
      LLMTRAIN_CHECK(token.id >= 0 && token.id <= kMaxTokenId && !token.content.empty(), where,
                     ": invalid added token (empty, or id outside [0, ", kMaxTokenId, "]): ", t.dump());
      token.lstrip = t.value("lstrip", false);
      token.rstrip = t.value("rstrip", false);
      token.single_word = t.value("single_word", false);
      token.normalized = t.value("normalized", !t.value("special", false));  // HF's default
      impl.added_tokens.push_back(token);
    }
  } catch (const json::exception& e) {
    LLMTRAIN_FAIL(where, ": unexpected tokenizer.json structure: ", e.what());
  }
}

void load_vocab_and_merges(const std::string& vocab_json, const std::string& vocab_where,
                           const std::string& merges_txt, const std::string& merges_where, Tokenizer::Impl& impl) {
  std::vector<std::pair<std::string, TokenId>> vocab;
  try {
    vocab = parse_vocab(parse_json(vocab_json, vocab_where), vocab_where);
  } catch (const json::exception& e) {
    LLMTRAIN_FAIL(vocab_where, ": ", e.what());
  }
  std::vector<std::pair<std::string, std::string>> merges;
  for (const MergeLine& line : merge_lines(merges_txt))
    merges.push_back(split_merge(line.text, merges_where + ":" + std::to_string(line.number), merges.size()));
  BpeOptions options;
  options.byte_level = true;
  impl.model = std::make_unique<BpeModel>(vocab, merges, options, vocab_where + " + " + merges_where);
  impl.pre_tokenizer = make_byte_level(false, true);
  impl.decoder = make_byte_level_decoder();
  if (std::optional<TokenId> eot = impl.model->token_to_id("<|endoftext|>")) {
    AddedToken token;
    token.content = "<|endoftext|>";
    token.id = *eot;
    impl.added_tokens.push_back(token);
  }
}

TokenizerFiles find_tokenizer_files(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return {path, ""};
  const fs::path dir(path);
  for (const auto& [vocab, merges] : {std::pair{"vocab.json", "merges.txt"}, std::pair{"encoder.json", "vocab.bpe"}})
    if (!fs::exists(dir / "tokenizer.json") && fs::exists(dir / vocab) && fs::exists(dir / merges))
      return {(dir / vocab).string(), (dir / merges).string()};
  LLMTRAIN_CHECK(fs::exists(dir / "tokenizer.json"), path,
                 ": directory has no tokenizer.json, vocab.json + merges.txt, or encoder.json + vocab.bpe");
  return {(dir / "tokenizer.json").string(), ""};
}

Tokenizer Tokenizer::load(const std::string& path) {
  auto impl = std::make_shared<Impl>();
  static std::atomic<std::uint64_t> next_serial{1};
  impl->serial = next_serial++;
  const TokenizerFiles files = find_tokenizer_files(path);
  impl->source = files.merges.empty() ? files.vocab_or_json : path;
  if (!files.merges.empty()) {
    const std::string v = read_file(files.vocab_or_json), m = read_file(files.merges);
    // The fingerprint is FNV-1a (core/hash.hpp), stable across platforms and versions, so that checkpoints
    // and .ltok files can store it: of the vocabulary's bytes followed by the merges'.
    impl->fingerprint = fnv1a(fnv1a(kFnv1aStart, v.data(), v.size()), m.data(), m.size());
    load_vocab_and_merges(v, files.vocab_or_json, m, files.merges, *impl);
  } else {
    const std::string text = read_file(files.vocab_or_json);
    impl->fingerprint = fnv1a(kFnv1aStart, text.data(), text.size());
    load_tokenizer_json(text, files.vocab_or_json, *impl);
  }
  finish_loading(*impl);
  unicode::prepare_tables();  // here rather than inside the first encode of non-ASCII text (about 1 ms)
  return Tokenizer(std::move(impl));
}

}  // namespace llmtrain::tokenizer
