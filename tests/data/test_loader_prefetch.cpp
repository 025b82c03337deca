// The background prefetcher: same rows as the synchronous loader, a state that describes what was consumed
// however far the producer ran ahead (deliberately slow and fast consumers), producer errors reaching the
// trainer, and shutdown at any point without hanging.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "loader_test_util.hpp"
#include "state.hpp"

namespace llmtrain::data::testing {
namespace {

LoaderOptions options(std::int64_t prefetch) {
  LoaderOptions o = small_options({{"licenses", license_corpus(), 1.0, "text"}});
  o.prefetch_rows = prefetch;
  return o;
}

void expect_same_batches(const World& a, int from, const World& b, int count) {
  for (std::size_t r = 0; r < a.ranks.size(); ++r)
    for (int s = 0; s < count; ++s) {
      ASSERT_EQ(a.batches[r][static_cast<std::size_t>(from + s)].tokens, b.batches[r][static_cast<std::size_t>(s)].tokens)
          << "rank " << r << " step " << from + s;
      ASSERT_EQ(a.batches[r][static_cast<std::size_t>(from + s)].doc_index,
                b.batches[r][static_cast<std::size_t>(s)].doc_index);
    }
}

TEST(LoaderPrefetch, SameRowsAsTheSynchronousLoader) {
  World sync(options(0), 2), async(options(16), 2);
  sync.steps(50);
  async.steps(50);
  expect_same_batches(sync, 0, async, 50);
}

TEST(LoaderPrefetch, StateIsWhatWasConsumedWithSlowAndFastConsumers) {
  World reference(options(0), 2);
  reference.steps(60);
  for (bool slow : {false, true}) {
    SCOPED_TRACE(slow ? "slow consumer" : "fast consumer");
    World async(options(16), 2);
    for (int s = 0; s < 20; ++s) {
      async.step();
      if (slow) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    std::vector<std::string> states = async.states();
    // Slow consumer: wait (bounded) until the producer is over half the ring ahead (it refills the ring once
    // half of it is free), and save then, from the idle producer.
    for (int wait = 0; slow && wait < 10000 && decode_state(states[0]).ready.size() <= 8; ++wait) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      states = async.states();
    }
    if (slow) {
      EXPECT_GT(decode_state(states[0]).ready.size(), 8u);
      EXPECT_LE(decode_state(states[0]).ready.size(), 16u);
    }
    World resumed_sync(options(0), 2, states), resumed_async(options(16), 2, states);
    resumed_sync.steps(40);
    resumed_async.steps(40);
    expect_same_batches(reference, 20, resumed_sync, 40);
    expect_same_batches(reference, 20, resumed_async, 40);
  }
}

// States taken while the producer is busy (many times, at every step): each resumes to the reference run.
// With 3 rows per batch the producer also answers in the middle of a batch, with rows made but not yet in
// the ring.
TEST(LoaderPrefetch, StatesTakenWhileTheProducerRunsAreConsistent) {
  for (std::int64_t rows : {1, 3}) {
    SCOPED_TRACE(::testing::Message() << rows << " rows per batch");
    LoaderOptions sync = options(0), async = options(4);
    sync.batch_rows = async.batch_rows = rows;
    World reference(sync, 1);
    reference.steps(160);
    Loader loader(async, byte_encoder(), 0, 1);
    for (int step = 0; step < 150; ++step) {
      loader.next();
      World resumed(sync, 1, {loader.state()});
      resumed.steps(2);
      expect_same_batches(reference, step + 1, resumed, 2);
    }
  }
}

TEST(LoaderPrefetch, RescaleFromAPrefetchingRunIsExactlyOnce) {
  LoaderOptions o = options(8);
  Corpus corpus = scan_corpus(o, ByteEncoder());
  Coverage cov;
  World first(o, 2);
  first.steps(25, &cov, &corpus);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  World second(options(0), 3, first.states());
  second.run_through_epoch(0, &cov, &corpus);
  cov.expect_exactly(corpus, 0);
}

TEST(LoaderPrefetch, ProducerErrorsReachTheTrainerWithTheirMessage) {
  TempDir dir("prefetch-error");
  std::string lines;
  for (int i = 0; i < 50; ++i) lines += "{\"text\": \"document " + std::to_string(i) + "\"}\n";
  write_file(dir / "a.jsonl", lines + "{broken\n");
  LoaderOptions o = small_options({{"a", dir.path(), 1.0, "text"}}, 15);
  o.on_bad_record = BadRecordPolicy::fail;
  o.prefetch_rows = 4;
  Loader loader(o, byte_encoder(), 0, 1);
  try {
    for (int i = 0; i < 1000; ++i) loader.next();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("a.jsonl"), std::string::npos) << e.what();
  }
  EXPECT_THROW(loader.next(), Error);  // stays failed; the destructor then joins the stopped thread
}

TEST(LoaderPrefetch, ShutdownAtAnyPointDoesNotHang) {
  for (int consumed : {0, 1, 5}) {
    Loader loader(options(64), byte_encoder(), 0, 1);
    for (int i = 0; i < consumed; ++i) loader.next();
  }  // destroyed with the producer running, waiting for space, or never started
}

}  // namespace
}  // namespace llmtrain::data::testing
