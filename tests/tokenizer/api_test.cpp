// Tokenizer API: the 44 Llama-3 vectors, GPT-2 and Mistral basics, invalid UTF-8, linear-time merging,
// concurrent use from several threads, per-thread memos on memory that held another tokenizer's, and clear
// errors for malformed or unsupported files.
#include <gtest/gtest.h>

#include <malloc.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "bpe_merge.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/tokenizer/tokenizer.hpp"
#include "test_data.hpp"

namespace llmtrain::tokenizer {
namespace {

TEST(TokenizerApi, Llama3Vectors) {
  const auto path = test::llama3_json();
  if (!path) GTEST_SKIP() << "Llama-3 tokenizer.json not found under LLMTRAIN_SHARED_DIR (licence: not in the repo)";
  const Tokenizer tok = Tokenizer::load(*path);
  const auto cases = nlohmann::json::parse(test::read_binary(test::data_path("llama3-cases.json")));
  ASSERT_EQ(cases["inp"].size(), 44u);
  for (std::size_t i = 0; i < cases["inp"].size(); ++i) {
    const std::string text = cases["inp"][i].get<std::string>();
    EXPECT_EQ(tok.encode(text), cases["out"][i].get<std::vector<TokenId>>()) << "case " << i << ": " << text;
    EXPECT_EQ(tok.decode(tok.encode(text)), text);
  }
  EXPECT_EQ(tok.vocab_size(), 128256u);
  EXPECT_EQ(tok.token_to_id("<|begin_of_text|>"), 128000);
  EXPECT_FALSE(tok.bos_id());  // this file's post-processor is ByteLevel only: HF adds no BOS either
}

TEST(TokenizerApi, Gpt2) {
  const Tokenizer tok = Tokenizer::load(test::gpt2_dir());
  EXPECT_EQ(tok.encode("Hello world<|endoftext|> it's"), (std::vector<TokenId>{15496, 995, 50256, 340, 338}));
  EXPECT_EQ(tok.vocab_size(), 50257u);
  EXPECT_EQ(tok.token_to_id("<|endoftext|>"), 50256);
  EXPECT_FALSE(tok.token_to_id("no such token"));
  EXPECT_FALSE(tok.bos_id());
  EXPECT_FALSE(tok.eos_id());
  std::vector<TokenId> out{7};
  tok.encode("Hello", out);  // appends
  EXPECT_EQ(out, (std::vector<TokenId>{7, 15496}));
  const Tokenizer copy = tok;  // cheap shared copy
  EXPECT_EQ(copy.fingerprint(), Tokenizer::load(test::gpt2_dir()).fingerprint());
  // Checkpoints and .ltok files store the fingerprint, so it never changes: FNV-1a 64 of encoder.json's bytes
  // then vocab.bpe's, computed independently (Python, from the FNV-1a definition).
  EXPECT_EQ(tok.fingerprint(), 0xf1c9dc14a36a3b68ull);
  EXPECT_THROW(tok.decode(std::vector<TokenId>{50257}), Error);
  EXPECT_THROW(tok.decode(std::vector<TokenId>{-1}), Error);
}

TEST(TokenizerApi, MistralPostProcessor) {
  const Tokenizer tok = Tokenizer::load(test::mistral_json());
  EXPECT_EQ(tok.bos_id(), 1);
  EXPECT_FALSE(tok.eos_id());
  EXPECT_EQ(tok.vocab_size(), 32000u);
  EXPECT_EQ(tok.encode_with_special_tokens("Hello world"), (std::vector<TokenId>{1, 22557, 1526}));
  EXPECT_EQ(tok.encode(" Hello <s> world</s>"), (std::vector<TokenId>{28705, 22557, 28705, 1, 28705, 1526, 2}));
  EXPECT_NE(tok.fingerprint(), Tokenizer::load(test::gpt2_dir()).fingerprint());
}

// Invalid UTF-8 is encoded as its U+FFFD replacement (maximal subparts, like Python's errors="replace").
TEST(TokenizerApi, InvalidUtf8IsReplaced) {
  const Tokenizer tok = Tokenizer::load(test::gpt2_dir());
  EXPECT_EQ(tok.encode("a\xFF\xC0\xAF" "b\xE2\x82"), tok.encode("a\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD" "b\xEF\xBF\xBD"));
  EXPECT_EQ(tok.encode("\xF0\x9F\xA6"), tok.encode("\xEF\xBF\xBD"));
}

// BPE merging is O(n log n): the heap sees at most 3 pushes per symbol, even for 1 MiB of one character.
TEST(TokenizerApi, MergingIsLinearInWork) {
  MergeTable merges;  // token k is 2^k copies of "a"; merge (k, k) -> k + 1 with rank k
  merges.reserve(32);
  for (TokenId k = 0; k < 20; ++k) merges.insert(k, k, {static_cast<std::uint32_t>(k), k + 1});
  MergeScratch scratch;
  for (TokenId log_n : {12, 20}) {
    const std::size_t n = std::size_t{1} << log_n;
    std::vector<TokenId> ids(n, 0);
    const std::size_t pushes = bpe_merge(ids, merges, scratch);
    EXPECT_LE(pushes, 3 * n);
    EXPECT_EQ(ids, std::vector<TokenId>{log_n});
  }
  const Tokenizer tok = Tokenizer::load(test::gpt2_dir());
  const std::string a(1 << 20, 'a');
  EXPECT_EQ(tok.decode(tok.encode(a)), a);
}

TEST(TokenizerApi, ConcurrentEncodeMatchesSerial) {
  const Tokenizer tok = Tokenizer::load(test::mistral_json());
  const auto& docs = test::corpus().docs;
  std::vector<std::vector<TokenId>> serial;
  for (std::size_t i = 0; i < 200; ++i) serial.push_back(tok.encode(docs[i]));
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 1);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (std::size_t i = 0; i < 200; ++i)
        if (tok.encode(docs[(i + 50 * t) % 200]) != serial[(i + 50 * t) % 200]) ok[t] = 0;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok, std::vector<int>(4, 1));
}

// The per-thread memos (PairMemo, CharSymbols::Memo) are malloc'd uncleared and cleared chunk by chunk at first
// use (LazyZeroedArray). Here each encoding thread gets memory that held the memos of the other byte-level
// tokenizer: heap blocks are kept on free (no mmap, no trim), and a new thread takes over the arena of the one
// that exited. The character memo is keyed by the character's bytes alone, so an entry left over from GPT-2
// would give Llama-3 GPT-2's ids (and the pair memo would give merges of the other vocabulary's ids).
TEST(TokenizerApi, MemosOnRecycledMemory) {
  const auto llama3_path = test::llama3_json();
  if (!llama3_path) GTEST_SKIP() << "Llama-3 tokenizer.json not found under LLMTRAIN_SHARED_DIR";
  // AddressSanitizer's allocator ignores these (and quarantines freed memory): there the test checks the ids only.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  const Tokenizer gpt2 = Tokenizer::load(test::gpt2_dir());
  const Tokenizer llama3 = Tokenizer::load(*llama3_path);
  const test::Corpus& c = test::corpus();
  std::vector<std::size_t> docs;  // documents with non-ASCII text, the character memo's input
  for (std::size_t i = 0; i < c.docs.size() && docs.size() < 300; ++i)
    for (const char ch : c.docs[i])
      if (static_cast<unsigned char>(ch) >= 0x80) {
        docs.push_back(i);
        break;
      }
  ASSERT_GE(docs.size(), 100u);
  std::size_t mismatches = 0;
  for (int round = 0; round < 4; ++round) {
    const Tokenizer& tok = round % 2 == 0 ? gpt2 : llama3;
    std::thread([&] {
      if (round == 0) {  // the first thread's arena: not zero where its memos will land
        void* dirt = std::malloc(std::size_t{1} << 20);
        std::memset(dirt, 0xA5, std::size_t{1} << 20);
        std::free(dirt);
      }
      for (const std::size_t i : docs)
        if (test::ids_digest(tok.encode(c.docs[i])) != c.refs[i][round % 2] && ++mismatches <= 5)
          ADD_FAILURE() << "round " << round << ", document " << i << ": ids differ from HF's";
    }).join();
  }
  EXPECT_EQ(mismatches, 0u) << "of " << 4 * docs.size() << " encodings";
  mallopt(M_MMAP_THRESHOLD, 128 << 10);
  mallopt(M_TRIM_THRESHOLD, 128 << 10);
}

// Loads `json_text` and returns the error message (empty if it loaded).
std::string load_error(const std::string& json_text) {
  const std::string path = test::temp_dir() + "/bad_tokenizer.json";
  std::ofstream(path, std::ios::trunc) << json_text;
  try {
    Tokenizer::load(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(TokenizerApi, ClearLoadErrors) {
  const std::string model = R"("model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]})";
  EXPECT_EQ(load_error("{" + model + "}"), "");
  EXPECT_NE(load_error("{" + model).find("malformed JSON"), std::string::npos);
  EXPECT_NE(load_error("[1, 2]").find("bad_tokenizer.json: not a tokenizer file: JSON without the tokenizer's \"model\"; "
                                      "expected a Hugging Face tokenizer.json, or a directory with"),
            std::string::npos);
  // Some other file (binary, not JSON): what was expected, and none of its bytes raw.
  const std::string binary = load_error(std::string("\x93NUMPY\x01\x00v\x00{'descr'", 16));
  EXPECT_NE(binary.find("bad_tokenizer.json: not a tokenizer file: malformed JSON ("), std::string::npos) << binary;
  EXPECT_NE(binary.find("expected a Hugging Face tokenizer.json, or a directory with tokenizer.json, vocab.json + "
                        "merges.txt, or encoder.json + vocab.bpe"),
            std::string::npos)
      << binary;
  EXPECT_NE(binary.find("\\x93"), std::string::npos) << binary;
  for (const char c : binary) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << "raw byte " << int(c) << " in: " << binary;
  EXPECT_NE(load_error(R"({"normalizer": {"type": "Lowercase"}, )" + model + "}").find("unsupported normalizer 'Lowercase'"),
            std::string::npos);
  EXPECT_NE(load_error(R"({"pre_tokenizer": {"type": "BertPreTokenizer"}, )" + model + "}").find("BertPreTokenizer"),
            std::string::npos);
  EXPECT_NE(load_error(R"({"decoder": {"type": "WordPiece"}, )" + model + "}").find("unsupported decoder 'WordPiece'"),
            std::string::npos);
  EXPECT_NE(load_error(R"({"post_processor": {"type": "BertProcessing"}, )" + model + "}").find("BertProcessing"),
            std::string::npos);
  EXPECT_NE(load_error(R"({"model": {"type": "WordPiece", "vocab": {}}})").find("unsupported model type 'WordPiece'"),
            std::string::npos);
  EXPECT_NE(load_error(R"({"model": {"vocab": {"a": 0}, "merges": ["a c"]}})").find("token 'c' is not in the vocabulary"),
            std::string::npos);
  EXPECT_NE(load_error(R"({"model": {"vocab": {"a": 0}, "merges": ["abc"]}})").find("not two tokens"), std::string::npos);
  EXPECT_NE(load_error(R"({"truncation": {"max_length": 5}, )" + model + "}").find("truncation"), std::string::npos);
  EXPECT_NE(load_error(R"({"pre_tokenizer": {"type": "Split", "pattern": {"Regex": "(["}, "behavior": "Isolated"}, )" +
                       model + "}")
                .find("cannot compile regex"),
            std::string::npos);
  EXPECT_NE(load_error(R"({"model": {"vocab": {"a": "x"}, "merges": []}})").find("non-integer id"), std::string::npos);
  EXPECT_NE(load_error(R"({"model": {"vocab": {"a": 2000000000}, "merges": []}})").find("outside [0, 16777215]"),
            std::string::npos);
  EXPECT_NE(load_error(R"({"added_tokens": [{"id": -3, "content": "x"}], )" + model + "}").find("invalid added token"),
            std::string::npos);
  EXPECT_NE(load_error(R"({"model": {"vocab": {"a": 0}, "merges": [], "unk_token": "<unk>"}})").find("unk_token"),
            std::string::npos);
  try {
    Tokenizer::load(test::temp_dir() + "/does-not-exist.json");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does-not-exist.json: cannot open"), std::string::npos);
  }
  EXPECT_THROW(Tokenizer::load(test::temp_dir()), Error);  // a directory without tokenizer files
}

}  // namespace
}  // namespace llmtrain::tokenizer
