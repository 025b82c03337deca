// Single-thread encoding throughput on English prose and on source code, for GPT-2 and Llama-3 (Mistral
// too), using the differential test corpus: prose = its first 3.9 MB (fortunes, Jargon File), code = bytes
// 5.65-7.15 MB (Python standard library, C headers). "warm" keeps the per-thread pre-token cache between
// iterations (a data loader's steady state); "cold" loads a fresh tokenizer, so the cache starts empty.
//
//   ./build/bin/tokenizer_bench [--benchmark_filter='tokenizer:1/']   (0 GPT-2, 1 Llama-3, 2 Mistral)
// BM_Utf8Check times the UTF-8 validation every encode starts with (unicode::first_invalid) on the same texts.
// Llama-3 needs the shared data folder (LLMTRAIN_SHARED_DIR); it is skipped without it.
#include <benchmark/benchmark.h>

#include "llmtrain/tokenizer/tokenizer.hpp"
#include "test_data.hpp"
#include "unicode.hpp"

namespace {

using llmtrain::tokenizer::TokenId;
using llmtrain::tokenizer::Tokenizer;
namespace test = llmtrain::tokenizer::test;

std::vector<std::string> slice(std::size_t from, std::size_t to) {
  std::vector<std::string> out;
  std::size_t offset = 0;
  for (const std::string& doc : test::corpus().docs) {
    if (offset >= from && offset < to) out.push_back(doc);
    offset += doc.size();
  }
  return out;
}

const std::vector<std::string>& texts(int kind) {
  static const std::vector<std::string> prose = slice(0, 3'900'000), code = slice(5'650'000, 7'150'000);
  return kind == 0 ? prose : code;
}

std::string tokenizer_path(int which) {
  if (which == 0) return test::gpt2_dir();
  if (which == 1) return test::llama3_json().value_or("");
  return test::mistral_json();
}

// Arguments: tokenizer (0 GPT-2, 1 Llama-3, 2 Mistral), text (0 prose, 1 code), cache (0 cold, 1 warm).
void BM_Encode(benchmark::State& state) {
  const std::string path = tokenizer_path(static_cast<int>(state.range(0)));
  if (path.empty()) {
    state.SkipWithError("Llama-3 tokenizer.json not found (set LLMTRAIN_SHARED_DIR)");
    return;
  }
  const auto& docs = texts(static_cast<int>(state.range(1)));
  const bool warm = state.range(2) == 1;
  Tokenizer tok = Tokenizer::load(path);
  std::vector<TokenId> ids;
  std::size_t bytes = 0, tokens = 0;
  for (auto _ : state) {
    if (!warm) {
      state.PauseTiming();
      tok = Tokenizer::load(path);
      state.ResumeTiming();
    }
    for (const std::string& doc : docs) {
      ids.clear();
      tok.encode(doc, ids);
      bytes += doc.size();
      tokens += ids.size();
    }
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(tokens), benchmark::Counter::kIsRate);
}

BENCHMARK(BM_Encode)
    ->ArgNames({"tokenizer", "text", "warm"})
    ->ArgsProduct({{0, 1, 2}, {0, 1}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0);

// Argument: text (0 prose, 1 code).
void BM_Utf8Check(benchmark::State& state) {
  const auto& docs = texts(static_cast<int>(state.range(0)));
  std::size_t bytes = 0;
  for (auto _ : state) {
    for (const std::string& doc : docs) {
      benchmark::DoNotOptimize(llmtrain::tokenizer::unicode::first_invalid(doc));
      bytes += doc.size();
    }
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
}

BENCHMARK(BM_Utf8Check)
    ->ArgNames({"text"})
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMicrosecond)
    ->MinTime(1.0);

}  // namespace

BENCHMARK_MAIN();
