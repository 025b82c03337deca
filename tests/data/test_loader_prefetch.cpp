// The background prefetcher: same rows as the synchronous loader, a state that is the synchronous loader's
// byte for byte however far the producer ran ahead (so a rescale from it is timing-independent), producer errors
// reaching the trainer, and shutdown at any point without hanging.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <thread>

#include "adaptive_prefetch.hpp"
#include "loader_test_util.hpp"
#include "state.hpp"

namespace llmtrain::data::testing {
namespace {

// Who makes the batches when prefetching (LoaderOptions::prefetch_chooser): the thread always, or the thread
// and the caller's thread taking turns, the thread's answer `thread` times, then the caller's `caller` times.
// A turn from the thread to the caller drains the ring first (up to 16 batches in these tests), so with
// caller = 20 the caller's thread makes some batches in every turn; with turns of 1 a new thread is often
// asked for while the last one drains. Each turn back starts a new thread from the consumed state.
struct Chooser {
  const char* name;
  PrefetchChooser choose;
};
PrefetchChooser turns(int thread, int caller) {
  return [thread, caller, n = 0](const PrefetchTiming&) mutable { return n++ % (thread + caller) < thread; };
}
std::vector<Chooser> choosers() {
  return {{"thread", always_prefetch_thread}, {"turns of 3 and 20", turns(3, 20)}, {"turns of 1 and 1", turns(1, 1)}};
}

LoaderOptions options(std::int64_t prefetch) {
  LoaderOptions o = small_options({{"licenses", license_corpus(), 1.0, "text"}});
  o.prefetch_rows = prefetch;
  o.prefetch_chooser = always_prefetch_thread;
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

// States compared byte for byte; a difference is shown in readable form.
::testing::AssertionResult same_states(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.size() != b.size()) return ::testing::AssertionFailure() << a.size() << " states against " << b.size();
  for (std::size_t r = 0; r < a.size(); ++r)
    if (a[r] != b[r])
      return ::testing::AssertionFailure() << "rank " << r << ":\n" << describe_state(a[r]) << "against\n"
                                           << describe_state(b[r]);
  return ::testing::AssertionSuccess();
}

// The input of a test: the committed raw JSON Lines corpus, or the same pre-tokenized to .ltok.
struct Input {
  const char* name;
  std::string path;
};

std::vector<Input> inputs(const TempDir& dir) {
  pretokenize_licenses(dir.path());
  return {{"raw text", license_corpus()}, {".ltok", dir / "licenses"}};
}

// The state is what was consumed, and nothing else: after every step, with prefetching, the same bytes as the
// synchronous loader's, on every rank, from the first batch on (the window fills over the first steps: 4 of
// them with window 8 and one row per batch, 16 with window 64 and 2 rows). Every few steps the consumer pauses
// so that the producer fills its ring: a state that included what the producer made ahead would differ then.
TEST(LoaderPrefetch, StateIsTheSynchronousStateByteForByte) {
  TempDir dir("prefetch-state");
  for (const Input& input : inputs(dir))
    for (int world : {1, 2, 3})
      for (auto [rows, window] : {std::pair<std::int64_t, std::int64_t>{1, 8}, {2, 64}})
        for (std::int64_t prefetch : {rows, std::int64_t{16}})
          for (const Chooser& chooser : choosers()) {
            SCOPED_TRACE(::testing::Message() << input.name << ", W " << world << ", " << rows
                                              << " rows per batch, window " << window << ", prefetch " << prefetch
                                              << " rows, " << chooser.name);
            LoaderOptions o = small_options({{"licenses", input.path, 1.0, "text"}});
            o.batch_rows = rows;
            o.shuffle_window = window;
            World sync(o, world);
            o.prefetch_rows = prefetch;
            o.prefetch_chooser = chooser.choose;
            World async(o, world);
            ASSERT_TRUE(same_states(sync.states(), async.states())) << "before the first batch";
            for (int step = 1; step <= 40; ++step) {
              sync.step();
              async.step();
              if (step % 7 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(3));
              ASSERT_TRUE(same_states(sync.states(), async.states())) << "after step " << step;
              for (std::size_t r = 0; r < sync.ranks.size(); ++r) {
                const LoaderStats a = sync.ranks[r]->stats(), b = async.ranks[r]->stats();
                ASSERT_EQ(a.datasets[0].epoch, b.datasets[0].epoch);
                ASSERT_EQ(a.datasets[0].records_read, b.datasets[0].records_read);
                ASSERT_EQ(a.datasets[0].tokens_drawn, b.datasets[0].tokens_drawn);
              }
            }
          }
}

// The default 1024 logical shards, where a batch moves a few of the rank's many cursors and an epoch's end moves
// all of them: the Progress carries only the cursors that moved, and the state is still the synchronous one
// byte for byte at every step, over several epochs; every document of epochs 0 and 1 is delivered exactly once,
// and a run resumed from a prefetched state at step 40 gives the synchronous run's batches.
TEST(LoaderPrefetch, At1024ShardsTheStateIsTheSynchronousStateOverEpochs) {
  TempDir dir("prefetch-1024");
  for (const Input& input : inputs(dir))
    for (int world : {1, 3})
      for (const Chooser& chooser : choosers()) {
        SCOPED_TRACE(::testing::Message() << input.name << ", W " << world << ", " << chooser.name);
        LoaderOptions o = small_options({{"licenses", input.path, 1.0, "text"}}, 255);
        o.logical_shards = 1024;
        o.batch_rows = 8;
        const Corpus corpus = scan_corpus(o, *byte_encoder());
        World sync(o, world);
        o.prefetch_rows = 32;
        o.prefetch_chooser = chooser.choose;
        World async(o, world);
        Coverage coverage;
        std::vector<std::string> at40;
        for (int step = 1; step <= 120; ++step) {
          sync.step(&coverage, &corpus);
          async.step();
          if (step % 9 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
          ASSERT_TRUE(same_states(sync.states(), async.states())) << "after step " << step;
          if (step == 40) at40 = async.states();
        }
        expect_same_batches(sync, 0, async, 120);
        for (std::size_t r = 0; r < async.ranks.size(); ++r) ASSERT_GE(async.ranks[r]->stats().datasets[0].epoch, 2u);
        coverage.expect_exactly(corpus, 0);
        coverage.expect_exactly(corpus, 1);
        World resumed(o, world, at40);
        resumed.steps(80);
        expect_same_batches(sync, 40, resumed, 80);
      }
}

// What ckpt_strategy_chain found: a rescale from a state taken while the producer ran ahead dealt the rows it had
// made to the new ranks, so the order after it depended on timing. Now the state taken with the producer's ring
// full (the consumer waited) equals the synchronous one, and resuming it onto 3 ranks, with or without
// prefetching, gives the batches of a resume from the synchronous state.
TEST(LoaderPrefetch, RescaleFromAPrefetchedStateGivesTheSynchronousBatches) {
  TempDir dir("prefetch-rescale");
  for (const Input& input : inputs(dir)) {
    SCOPED_TRACE(input.name);
    LoaderOptions o = small_options({{"licenses", input.path, 1.0, "text"}});
    World sync(o, 2);
    sync.steps(25);
    o.prefetch_rows = 16;
    o.prefetch_chooser = always_prefetch_thread;
    World async(o, 2);
    async.steps(25);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const std::vector<std::string> saved_sync = sync.states(), saved_async = async.states();
    ASSERT_TRUE(same_states(saved_sync, saved_async));
    o.prefetch_rows = 0;
    World reference(o, 3, saved_sync), from_async(o, 3, saved_async);
    o.prefetch_rows = 8;
    World prefetched(o, 3, saved_async);
    reference.steps(40);
    from_async.steps(40);
    prefetched.steps(40);
    expect_same_batches(reference, 0, from_async, 40);
    expect_same_batches(reference, 0, prefetched, 40);
  }
}

// next_into() hands the caller's storage back to the ring, and the producer assembles later batches into it: a
// batch the caller still holds (here the last three, in three Batch objects taken into in turn) must never
// change or share storage with another, the batches must be the synchronous loader's, and under the audit every
// token of epochs 0 and 1 is delivered exactly once. The consumer pauses now and then so that the producer fills
// its ring and works on storage it got back.
TEST(LoaderPrefetch, RecycledStorageNeverAliasesABatchTheCallerHolds) {
  TempDir dir("prefetch-recycle");
  for (const Input& input : inputs(dir))
    for (std::int64_t prefetch : {2, 16})
      for (const Chooser& chooser : choosers()) {
        SCOPED_TRACE(::testing::Message() << input.name << ", prefetch " << prefetch << " rows, " << chooser.name);
        LoaderOptions o = small_options({{"licenses", input.path, 1.0, "text"}});
        o.batch_rows = 2;
        const Corpus corpus = scan_corpus(o, *byte_encoder());
        World sync(o, 1);
        o.prefetch_rows = prefetch;
        o.prefetch_chooser = chooser.choose;
        Loader loader(o, byte_encoder(), 0, 1);
        Coverage coverage;
        std::array<Batch, 3> held, copies;
        for (std::size_t step = 0; loader.stats().datasets[0].epoch <= 1; ++step) {
          ASSERT_LT(step, 100000u);
          Batch& into = held[step % 3];
          loader.next_into(into);
          sync.step();
          ASSERT_EQ(into.tokens, sync.batches[0].back().tokens) << "step " << step;
          ASSERT_EQ(into.doc_index, sync.batches[0].back().doc_index) << "step " << step;
          coverage.add(into, loader.last_provenance(), corpus);
          copies[step % 3] = into;
          for (std::size_t k = 0; k < held.size() && k <= step; ++k) {
            ASSERT_EQ(held[k].tokens, copies[k].tokens) << "a held batch changed at step " << step;
            ASSERT_EQ(held[k].doc_index, copies[k].doc_index) << "a held batch changed at step " << step;
            if (&held[k] == &into) continue;
            ASSERT_NE(held[k].tokens.data(), into.tokens.data());
            ASSERT_NE(held[k].doc_index.data(), into.doc_index.data());
          }
          if (step % 11 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
        coverage.expect_exactly(corpus, 0);
        coverage.expect_exactly(corpus, 1);
      }
}

// States taken while the producer is busy (at every step): each resumes to the reference run.
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

// Once the producer thread runs it owns the loader's internals: a late restore() is refused before they are
// read (ThreadSanitizer flagged the former check, which read a flag the thread writes).
TEST(LoaderPrefetch, RestoreAfterTheFirstBatchIsRefused) {
  TempDir dir("prefetch-late-restore");
  const std::vector<Input> all = inputs(dir);
  LoaderOptions o = small_options({{"licenses", all.front().path, 1.0, "text"}});
  o.prefetch_rows = 8;
  o.prefetch_chooser = always_prefetch_thread;
  World world(o, 1);
  world.steps(2);
  const std::vector<std::string> saved = world.states();
  try {
    world.ranks[0]->restore(saved);
    FAIL() << "restore after next() was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("before the first next()"), std::string::npos) << e.what();
  }
  world.steps(1);  // the loader still works after the refusal
}

TEST(LoaderPrefetch, ProducerErrorsReachTheTrainerWithTheirMessage) {
  TempDir dir("prefetch-error");
  std::string lines;
  for (int i = 0; i < 50; ++i) lines += "{\"text\": \"document " + std::to_string(i) + "\"}\n";
  write_file(dir / "a.jsonl", lines + "{broken\n");
  LoaderOptions o = small_options({{"a", dir.path(), 1.0, "text"}}, 15);
  o.on_bad_record = BadRecordPolicy::fail;
  int sync_batches = 0;  // batches before the error, without prefetching
  {
    Loader loader(o, byte_encoder(), 0, 1);
    EXPECT_THROW(
        for (; sync_batches < 1000; ++sync_batches) loader.next(), Error);
  }
  o.prefetch_rows = 4;
  for (const Chooser& chooser : choosers()) {
    SCOPED_TRACE(chooser.name);
    o.prefetch_chooser = chooser.choose;
    Loader loader(o, byte_encoder(), 0, 1);
    int batches = 0;
    try {
      for (; batches < 1000; ++batches) loader.next();
      FAIL() << "no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("a.jsonl"), std::string::npos) << e.what();
    }
    EXPECT_EQ(batches, sync_batches) << "the error came after another number of batches";
    EXPECT_THROW(loader.next(), Error);  // stays failed; the destructor then joins the stopped thread
  }
}

// Turns between the thread and the caller's thread: the caller's batches are counted (only the first when the
// thread makes all others, none without prefetching), the batches and the state stay the synchronous ones, and a
// run that ends in either mode (the thread running, draining, or stopped) shuts down.
TEST(LoaderPrefetch, BatchesMadeByTheCallerAreCounted) {
  LoaderOptions o = options(0);
  World sync(o, 1);
  sync.steps(60);
  EXPECT_EQ(sync.ranks[0]->stats().batches_made_inline, 0u);
  o.prefetch_rows = 16;
  World thread(o, 1);
  thread.steps(60);
  EXPECT_EQ(thread.ranks[0]->stats().batches_made_inline, 1u) << "the first batch is the caller's, then the thread's";
  o.prefetch_chooser = turns(3, 20);
  World turning(o, 1);
  turning.steps(60);
  expect_same_batches(sync, 0, turning, 60);
  EXPECT_EQ(sync.states(), turning.states());
  const std::uint64_t inline_batches = turning.ranks[0]->stats().batches_made_inline;
  EXPECT_GE(inline_batches, 2u * 4u) << "a drain takes at most 16 of each turn's 20 caller batches";
  EXPECT_LE(inline_batches, 60u - 3u) << "batches 2 to 4 are the thread's";
  for (int steps : {1, 3, 4, 10, 22, 23, 24}) {
    World stopped(o, 1);
    stopped.steps(steps);
  }
}

// The loader's own rule (adaptive_prefetch.hpp), on given timings: it starts in the caller's thread, decides once
// per window of batches, on the window's sums, takes the thread only when the caller works over a quarter of the
// make time, leaves it only under a tenth, keeps its mode in between, and doubles its window at each switch.
TEST(AdaptivePrefetch, DecidesPerWindowWithABandBetweenTheModes) {
  AdaptivePrefetch rule;
  bool mode = false;  // the caller's thread, at the start
  // One window of equal timings: the answer must not change before its last batch.
  const auto window = [&](double caller_s, double make_s) {
    const std::int64_t length = rule.window();
    for (std::int64_t b = 0; b + 1 < length; ++b)
      EXPECT_EQ(rule({caller_s, make_s}), mode) << "changed inside a window, at batch " << b;
    mode = rule({caller_s, make_s});
    return mode;
  };
  EXPECT_EQ(rule.window(), AdaptivePrefetch::kFirstWindow);
  EXPECT_FALSE(window(0, 1e-3)) << "a caller that does nothing: its own thread makes the batches";
  EXPECT_FALSE(window(0.2e-3, 1e-3)) << "in the band: stays";
  EXPECT_EQ(rule.window(), AdaptivePrefetch::kFirstWindow) << "no switch yet";
  EXPECT_TRUE(window(0.3e-3, 1e-3)) << "a caller with work to overlap: the thread";
  EXPECT_EQ(rule.window(), 2 * AdaptivePrefetch::kFirstWindow) << "a switch doubles the window";
  EXPECT_TRUE(window(0.15e-3, 1e-3)) << "in the band: stays";
  EXPECT_FALSE(window(0.05e-3, 1e-3)) << "the caller's thread again";
  EXPECT_EQ(rule.window(), 4 * AdaptivePrefetch::kFirstWindow);
  // Sums, not single batches: one long pause among idle batches outweighs them.
  for (std::int64_t b = 0; b + 1 < rule.window(); ++b) EXPECT_FALSE(rule({0, 1e-3}));
  mode = rule({0.5, 1e-3});
  EXPECT_TRUE(mode);
  // A caller that keeps crossing the band switches ever more rarely, the window growing up to its bound.
  for (int i = 0; i < 40; ++i) window(i % 2 ? 0.3e-3 : 0, 1e-3);
  EXPECT_EQ(rule.window(), AdaptivePrefetch::kMaxWindow);
}

TEST(LoaderPrefetch, ShutdownAtAnyPointDoesNotHang) {
  for (int consumed : {0, 1, 2, 6}) {
    Loader loader(options(64), byte_encoder(), 0, 1);
    for (int i = 0; i < consumed; ++i) loader.next();
  }  // destroyed with the producer never started (the first batch is the caller's), running, or waiting for space
}

}  // namespace
}  // namespace llmtrain::data::testing
