// Tokenizing in several threads (LoaderOptions::threads): batches and states bitwise identical to one thread,
// with or without the prefetcher, for deliberately slow and fast consumers; errors of the workers and of
// reading ahead reach the trainer at the same step as with one thread, with their message; shutdown at any
// point joins every thread it started, the workers' and the prefetch thread's.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "loader_test_util.hpp"
#include "state.hpp"

namespace llmtrain::data::testing {
namespace {

// Bytes, but slow and uneven (the delay depends on the text), so workers finish out of order; and a document
// containing "poison" fails with a message of its own.
class UnevenEncoder final : public DocumentEncoder {
 public:
  void encode(std::string_view text, std::vector<TokenId>& out) const override {
    LLMTRAIN_CHECK(text.find("poison") == std::string_view::npos, "encoder refused a poisoned document");
    std::this_thread::sleep_for(std::chrono::microseconds(text.size() % 7 * 40));
    for (unsigned char c : text) out.push_back(static_cast<TokenId>(c));
  }
  std::uint64_t fingerprint() const override { return ByteEncoder().fingerprint(); }
};

std::shared_ptr<const DocumentEncoder> uneven() { return std::make_shared<UnevenEncoder>(); }

LoaderOptions options(std::int64_t threads, std::int64_t prefetch = 0) {
  LoaderOptions o = small_options({{"gpl", license_corpus() + "/gpl-3.jsonl", 0.5, "text"},
                                   {"lgpl", license_corpus() + "/lgpl-2.1.jsonl", 0.3, "text"},
                                   {"zst", license_corpus() + "/mpl-2.0.jsonl.zst", 0.2, "text"}});
  o.threads = threads;
  o.prefetch_rows = prefetch;
  return o;
}

void expect_same_batches(const World& a, int from, const World& b, int count) {
  for (std::size_t r = 0; r < a.ranks.size(); ++r)
    for (int s = 0; s < count; ++s) {
      const Batch& x = a.batches[r][static_cast<std::size_t>(from + s)];
      const Batch& y = b.batches[r][static_cast<std::size_t>(s)];
      ASSERT_EQ(x.tokens, y.tokens) << "rank " << r << " step " << from + s;
      ASSERT_EQ(x.doc_index, y.doc_index) << "rank " << r << " step " << from + s;
    }
}

TEST(LoaderThreads, BatchesAndStatesBitwiseIdenticalFor1AndNThreads) {
  for (std::int64_t threads : {2, 4}) {
    for (std::int64_t prefetch : {0, 8}) {
      SCOPED_TRACE("threads " + std::to_string(threads) + " prefetch " + std::to_string(prefetch));
      World many(options(threads, prefetch), 2, {}, uneven());
      World ref(options(1, prefetch), 2, {}, uneven());
      for (int s = 0; s < 40; ++s) {
        many.step();
        ref.step();
        if (s % 13 == 0) {
          std::vector<std::string> a = ref.states(), b = many.states();
          EXPECT_TRUE(a == b) << "step " << s;  // the state is a function of the step, prefetching or not
          World resumed(options(1), 2, b, uneven());
          World resumed_ref(options(1), 2, a, uneven());
          resumed.steps(3);
          resumed_ref.steps(3);
          expect_same_batches(resumed_ref, 0, resumed, 3);
        }
      }
      expect_same_batches(ref, 0, many, 40);
    }
  }
}

TEST(LoaderThreads, StateIsWhatWasConsumedWithSlowAndFastConsumers) {
  World reference(options(1), 2);
  reference.steps(20);
  const std::vector<std::string> expected = reference.states();
  reference.steps(30);
  for (bool slow : {false, true}) {
    SCOPED_TRACE(slow ? "slow consumer" : "fast consumer");
    World threaded(options(3, 8), 2);
    for (int s = 0; s < 20; ++s) {
      threaded.step();
      if (slow) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    if (slow) std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the producer fills its ring
    const std::vector<std::string> states = threaded.states();
    EXPECT_EQ(states, expected);  // the one-thread synchronous state, byte for byte
    World resumed_one(options(1), 2, states), resumed_many(options(3, 8), 2, states);
    resumed_one.steps(30);
    resumed_many.steps(30);
    expect_same_batches(reference, 20, resumed_one, 30);
    expect_same_batches(reference, 20, resumed_many, 30);
  }
}

TEST(LoaderThreads, ExactlyOnceThroughAnEpochWithARescale) {
  LoaderOptions o = options(3);
  Corpus corpus = scan_corpus(o, ByteEncoder());
  Coverage cov;
  World first(o, 2);
  first.steps(15, &cov, &corpus);
  World second(options(2, 4), 3, first.states());
  second.run_through_epoch(0, &cov, &corpus);
  cov.expect_exactly(corpus, 0);
}

// A corpus whose 30th document (in file order) poisons the encoder: the loaders of 1 and 3 threads fail at
// the same step, with the encoder's message.
int steps_until_error(const LoaderOptions& o, std::string& message) {
  Loader loader(o, uneven(), 0, 1);
  for (int s = 0; s < 1000; ++s) {
    try {
      loader.next();
    } catch (const Error& e) {
      message = e.what();
      return s;  // the destructor joins every thread of the failed loader
    }
  }
  return -1;
}

TEST(LoaderThreads, WorkerErrorsReachTheTrainerAtTheSameStepWithTheirMessage) {
  TempDir dir("threads-error");
  std::string lines;
  for (int i = 0; i < 60; ++i)
    lines += "{\"text\": \"document " + std::to_string(i) + (i == 30 ? " poison" : "") + "\"}\n";
  write_file(dir / "a.jsonl", lines);
  LoaderOptions o = small_options({{"a", dir.path(), 1.0, "text"}}, 15);
  o.shuffle_window = 1;
  std::string m1;
  o.threads = 1;
  int s1 = steps_until_error(o, m1);
  ASSERT_GE(s1, 0);
  for (std::int64_t prefetch : {0, 4}) {
    std::string m3;
    o.threads = 3;
    o.prefetch_rows = prefetch;
    EXPECT_EQ(steps_until_error(o, m3), s1);
    EXPECT_EQ(m3, m1);
    EXPECT_NE(m3.find("encoder refused a poisoned document"), std::string::npos) << m3;
  }
}

TEST(LoaderThreads, ReadErrorsAheadKeepTheirPlace) {
  TempDir dir("threads-read-error");
  std::string lines;
  for (int i = 0; i < 60; ++i) lines += i == 40 ? "{broken\n" : "{\"text\": \"document " + std::to_string(i) + "\"}\n";
  write_file(dir / "a.jsonl", lines);
  LoaderOptions o = small_options({{"a", dir.path(), 1.0, "text"}}, 15);
  o.shuffle_window = 1;
  o.on_bad_record = BadRecordPolicy::fail;
  std::string m1, m4;
  o.threads = 1;
  int s1 = steps_until_error(o, m1);
  ASSERT_GE(s1, 0);
  o.threads = 4;
  EXPECT_EQ(steps_until_error(o, m4), s1);
  EXPECT_EQ(m4, m1);
  EXPECT_NE(m4.find("a.jsonl"), std::string::npos) << m4;
}

// The threads that ran the encoder, and how many of them have ended: each registers a thread_local whose
// destructor runs as the thread ends, before a join() of it returns. The test's own thread is not counted.
struct ThreadCensus {
  std::atomic<int> started{0}, ended{0};
};

struct CensusEntry {
  ThreadCensus* census = nullptr;
  ~CensusEntry() {
    if (census) ++census->ended;
  }
};

class CensusEncoder final : public DocumentEncoder {
 public:
  explicit CensusEncoder(ThreadCensus& census) : census_(census), caller_(std::this_thread::get_id()) {}
  void encode(std::string_view text, std::vector<TokenId>& out) const override {
    thread_local CensusEntry entry;
    if (std::this_thread::get_id() != caller_ && entry.census == nullptr) {
      entry.census = &census_;
      ++census_.started;
    }
    UnevenEncoder().encode(text, out);
  }
  std::uint64_t fingerprint() const override { return ByteEncoder().fingerprint(); }

 private:
  ThreadCensus& census_;
  std::thread::id caller_;
};

// Destroyed with the threads busy, idle or never started, a loader has joined every thread it started: the
// tokenizing workers (threads = 4) and the prefetch thread (forced by always_prefetch_thread; with threads = 1
// it tokenizes itself, so it is the one thread the census sees).
TEST(LoaderThreads, ShutdownAtAnyPointJoinsEveryThread) {
  for (const std::int64_t threads : {1, 4})
    for (const std::int64_t prefetch : {0, 64}) {
      if (threads == 1 && prefetch == 0) continue;  // no thread at all
      for (const int consumed : {0, 1, 5}) {
        SCOPED_TRACE("threads " + std::to_string(threads) + ", prefetch " + std::to_string(prefetch) + ", " +
                     std::to_string(consumed) + " batches");
        ThreadCensus census;
        {
          LoaderOptions o = options(threads, prefetch);
          if (prefetch > 0) o.prefetch_chooser = always_prefetch_thread;
          Loader loader(o, std::make_shared<CensusEncoder>(census), 0, 1);
          for (int i = 0; i < consumed; ++i) loader.next();
          if (consumed == 5) {
            if (threads == 1) {
              EXPECT_EQ(census.started, 1);  // the prefetch thread
            } else {
              EXPECT_GE(census.started, 1);  // tokenizing workers
            }
            if (prefetch > 0) {
              EXPECT_EQ(loader.stats().batches_made_inline, 1u);  // the first; the thread made the rest
            }
          }
        }
        EXPECT_EQ(census.ended, census.started) << "a thread outlived its loader";
      }
    }
}

}  // namespace
}  // namespace llmtrain::data::testing
