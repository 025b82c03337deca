// Cold passes of the tokenizer inside ONE process, beside a probe of the machine's memory latency
// (perf/RESULTS.md, "Slow fresh processes"). A fresh `llmtrain-tokenize --bench` process sometimes runs its cold pass at 60 %
// of the usual speed, and the question was whether something about that process (its huge pages, where its tables
// lie) or the machine at that moment makes it slow. Here the tokenizer is loaded once, so the merge table and the
// vocabulary keep the same pages for the whole run; each round encodes the input in a new thread (whose per-thread
// caches start empty: a cold pass, then a warm one), then times random reads over an 8 MB buffer that it has just
// read once (about 20 ns a read while the last-level cache keeps it, 100-300 ns while other work on the host
// evicts it). Rounds that are slow together with the probe, clustered in time, point at the machine.
//
//   tokenizer_cold_bench TOKENIZER INPUT.jsonl ROUNDS      # one line per round, then a summary
#include <llmtrain/tokenizer/tokenizer.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <time.h>

namespace {

double seconds(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// A random cycle through the cache lines of an 8 MB buffer: each read's address comes from the one before, so the
// time per read is the memory latency, not the bandwidth.
class LatencyProbe {
 public:
  LatencyProbe() : lines_(kBytes / kLine) {
    std::vector<std::uint32_t> order(lines_.size());
    std::iota(order.begin(), order.end(), 0u);
    std::shuffle(order.begin(), order.end(), std::mt19937(1));
    for (std::size_t i = 0; i < order.size(); ++i) lines_[order[i]].next = &lines_[order[(i + 1) % order.size()]];
    at_ = &lines_[0];
  }
  // Nanoseconds per read of a sample taken right after one full walk (which brings the buffer back into the
  // caches, as far as they keep it).
  double nanoseconds_per_read() {
    for (std::size_t i = 0; i < lines_.size(); ++i) at_ = at_->next;
    const double start = seconds(CLOCK_MONOTONIC);
    for (int i = 0; i < kSample; ++i) at_ = at_->next;
    const double elapsed = seconds(CLOCK_MONOTONIC) - start;
    end_ = at_;  // a volatile store of the last address read, so that the compiler keeps the reads
    return elapsed * 1e9 / kSample;
  }

 private:
  static constexpr std::size_t kBytes = std::size_t{8} << 20, kLine = 64;
  static constexpr int kSample = 30000;
  struct alignas(kLine) Line {
    Line* next;
  };
  std::vector<Line> lines_;
  Line* at_ = nullptr;
  Line* volatile end_ = nullptr;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: tokenizer_cold_bench TOKENIZER INPUT.jsonl ROUNDS\n");
    return 2;
  }
  const auto tokenizer = llmtrain::tokenizer::Tokenizer::load(argv[1]);
  std::vector<std::string> texts;
  std::size_t bytes = 0;
  std::ifstream in(argv[2]);
  if (!in) {
    std::fprintf(stderr, "tokenizer_cold_bench: cannot read %s\n", argv[2]);
    return 2;
  }
  for (std::string line; std::getline(in, line);) {
    texts.push_back(nlohmann::json::parse(line).at("text").get<std::string>());
    bytes += texts.back().size();
  }
  const int rounds = std::atoi(argv[3]);
  if (texts.empty() || rounds < 1) {
    std::fprintf(stderr, "tokenizer_cold_bench: need a non-empty INPUT and ROUNDS >= 1\n");
    return 2;
  }
  LatencyProbe probe;
  std::vector<double> cold(rounds), warm(rounds), latency(rounds);
  const double start = seconds(CLOCK_MONOTONIC);
  for (int r = 0; r < rounds; ++r) {
    std::thread thread([&] {
      double passes[2];
      for (double& mb_per_s : passes) {
        const double cpu = seconds(CLOCK_THREAD_CPUTIME_ID);
        for (const std::string& text : texts) tokenizer.encode(text);
        mb_per_s = static_cast<double>(bytes) / (seconds(CLOCK_THREAD_CPUTIME_ID) - cpu) / 1e6;
      }
      cold[r] = passes[0];
      warm[r] = passes[1];
    });
    thread.join();
    latency[r] = probe.nanoseconds_per_read();
    std::printf("%7.3f s  cold %6.1f  warm %6.1f MB/cpu-s  probe %6.1f ns\n", seconds(CLOCK_MONOTONIC) - start, cold[r],
                warm[r], latency[r]);
  }
  const double typical = median(cold);
  int slow = 0;
  for (double c : cold) slow += c < 0.85 * typical;
  std::printf("rounds %d  cold min %.1f median %.1f max %.1f  warm median %.1f  probe median %.1f ns  "
              "rounds under 0.85x the cold median: %d\n",
              rounds, *std::min_element(cold.begin(), cold.end()), typical, *std::max_element(cold.begin(), cold.end()),
              median(warm), median(latency), slow);
}
