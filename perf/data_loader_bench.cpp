// Data loader throughput and state costs (Google Benchmark). The corpus is generated once in a temporary
// directory from the committed license texts (tests/data/corpus), repeated to about 64 MB of JSON Lines in
// 16 files; LLMTRAIN_SOURCE_DIR locates the repository.
//
//   BM_Loader/bytes        read + split + pack + shuffle, byte encoder: the loader's own overhead
//   BM_Loader/gpt2         the same with the GPT-2 tokenizer (tokenization on the fly)
//   BM_Loader/gpt2_prefetch  the same with the background thread, rate per wall-clock second
//   BM_Gpt2EncodeOnly      the tokenizer alone on the same documents: the ceiling for BM_Loader/gpt2
//   BM_FirstBatch          construction + first batch (64 ranks' worth of shards: rank 0 of 64)
//   BM_StateSave / Restore one rank of 64, logical_shards 4096, shuffle_window 1024, seq_len 4096
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "llmtrain/data/loader.hpp"
#include "llmtrain/data/tokenizer_encoder.hpp"

namespace {

using namespace llmtrain;
using namespace llmtrain::data;

const std::string& corpus_dir() {
  static const std::string dir = [] {
    std::string out = (std::filesystem::temp_directory_path() / "llmtrain-data-bench").string();
    std::filesystem::create_directories(out);
    std::string source = std::string(LLMTRAIN_SOURCE_DIR) + "/tests/data/corpus/gpl-3.jsonl";
    std::ifstream in(source);
    std::string lines((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (int f = 0; f < 16; ++f) {
      std::string path = out + "/part-" + std::to_string(100 + f) + ".jsonl";
      if (std::filesystem::exists(path)) continue;
      std::ofstream file(path);
      for (std::size_t written = 0; written < (4u << 20); written += lines.size()) file << lines;
    }
    return out;
  }();
  return dir;
}

LoaderOptions bench_options() {
  LoaderOptions o;
  o.datasets = {{"bench", corpus_dir(), 1.0, "text"}};
  o.seq_len = 4096;
  o.seed = 1;
  o.logical_shards = 64;
  o.shuffle_window = 64;
  o.batch_rows = 8;
  o.block_bytes = 1 << 20;
  o.eos_id = 50256;
  return o;
}

std::shared_ptr<const DocumentEncoder> gpt2() {
  static auto encoder = std::make_shared<TokenizerEncoder>(
      llmtrain::tokenizer::Tokenizer::load(std::string(LLMTRAIN_SOURCE_DIR) + "/inputs/tokenizers/gpt2"));
  return encoder;
}

void BM_Loader(benchmark::State& state, bool tokenize, std::int64_t prefetch_rows) {
  LoaderOptions o = bench_options();
  o.prefetch_rows = prefetch_rows;
  std::shared_ptr<const DocumentEncoder> encoder = tokenize ? gpt2() : std::make_shared<ByteEncoder>();
  Loader loader(o, encoder, 0, 1);
  std::int64_t tokens = 0;
  for (auto _ : state) {
    Batch b = loader.next();
    tokens += static_cast<std::int64_t>(b.tokens.size());
    benchmark::DoNotOptimize(b.tokens.data());
  }
  state.counters["tokens_per_s"] = benchmark::Counter(static_cast<double>(tokens), benchmark::Counter::kIsRate);
}
BENCHMARK_CAPTURE(BM_Loader, bytes, false, 0)->Unit(benchmark::kMillisecond)->MinTime(3);
BENCHMARK_CAPTURE(BM_Loader, gpt2, true, 0)->Unit(benchmark::kMillisecond)->MinTime(3);
// With the background thread: the consumer's wall-clock rate (the work moves to the producer thread).
BENCHMARK_CAPTURE(BM_Loader, gpt2_prefetch, true, 64)->Unit(benchmark::kMillisecond)->MinTime(3)->UseRealTime();

void BM_Gpt2EncodeOnly(benchmark::State& state) {
  std::ifstream in(corpus_dir() + "/part-100.jsonl");
  std::vector<std::string> docs;
  std::string line;
  while (std::getline(in, line) && docs.size() < 2000)
    docs.push_back(nlohmann::json::parse(line)["text"].get<std::string>());
  std::vector<TokenId> out;
  std::int64_t tokens = 0;
  std::size_t i = 0;
  for (auto _ : state) {
    out.clear();
    gpt2()->encode(docs[i++ % docs.size()], out);
    tokens += static_cast<std::int64_t>(out.size());
  }
  state.counters["tokens_per_s"] = benchmark::Counter(static_cast<double>(tokens), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Gpt2EncodeOnly)->MinTime(3);

LoaderOptions big_run_options() {
  LoaderOptions o = bench_options();
  o.logical_shards = 4096;
  o.shuffle_window = 1024;
  o.batch_rows = 1;
  return o;
}

void BM_FirstBatch(benchmark::State& state) {
  for (auto _ : state) {
    Loader loader(big_run_options(), std::make_shared<ByteEncoder>(), 0, 64);
    benchmark::DoNotOptimize(loader.next().tokens.data());
  }
}
BENCHMARK(BM_FirstBatch)->Unit(benchmark::kMillisecond);

// Rank 0 of 64 after 20 batches (its window full); the other ranks' states are fresh ones, which is what a
// restore of rank 0 reads from them (their cursors).
void BM_StateSaveRestore(benchmark::State& state, bool restore) {
  auto encoder = std::make_shared<ByteEncoder>();
  Loader loader(big_run_options(), encoder, 0, 64);
  for (int i = 0; i < 20; ++i) loader.next();
  std::vector<std::string> blobs = {loader.state()};
  for (int r = 1; r < 64; ++r) blobs.push_back(Loader(big_run_options(), encoder, r, 64).state());
  for (auto _ : state) {
    if (restore) {
      Loader fresh(big_run_options(), encoder, 0, 64);
      fresh.restore(blobs);
      benchmark::DoNotOptimize(&fresh);
    } else {
      blobs[0] = loader.state();
    }
  }
  state.counters["state_bytes"] = static_cast<double>(blobs[0].size());
}
BENCHMARK_CAPTURE(BM_StateSaveRestore, save, false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_StateSaveRestore, restore, true)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
