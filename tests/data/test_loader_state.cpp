// The state blob: round trip, malformed blobs rejected with an error, size independent of the corpus, and
// drift detection (corpus files or tokenizer changed since the save) with the opt-in to continue.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <thread>

#include "loader_test_util.hpp"
#include "permutation.hpp"
#include "state.hpp"

namespace llmtrain::data::testing {
namespace {

LoaderOptions options() { return small_options({{"licenses", license_corpus(), 1.0, "text"}}); }

TEST(LoaderState, RoundTripAndDescribe) {
  World w(options(), 3);
  w.steps(20);
  for (const std::string& blob : w.states()) {
    EXPECT_EQ(encode_state(decode_state(blob)), blob);
    EXPECT_NE(describe_state(blob).find("of 3, seq_len 63"), std::string::npos) << describe_state(blob);
  }
}

TEST(LoaderState, MalformedBlobsAreErrors) {
  World w(options(), 1);
  w.steps(3);
  const std::string blob = w.states()[0];
  std::vector<std::string> bad = {"", "LLMTDATA", "not a state at all, but long enough to look like one"};
  bad.push_back(blob.substr(0, blob.size() / 2));
  std::string flipped = blob;
  flipped[flipped.size() / 2] ^= 0x20;
  bad.push_back(flipped);
  for (const std::string& b : bad) {
    EXPECT_THROW(decode_state(b), Error);
    Loader fresh(options(), byte_encoder(), 0, 1);
    EXPECT_THROW(fresh.restore({b}), Error);
  }
  // States of ranks of two different runs, or an incomplete set, are refused.
  World two(options(), 2);
  Loader fresh(options(), byte_encoder(), 0, 1);
  EXPECT_THROW(fresh.restore({two.states()[0]}), Error);
}

// Random corruption behind a valid checksum (what a bug or a hostile file could hand over): restoring and
// reading on must either work or raise llmtrain::Error, never crash or hang.
TEST(LoaderState, CorruptedStatesWithValidChecksumNeverCrash) {
  World w(options(), 2);
  w.steps(15);
  const std::vector<std::string> states = w.states();
  std::uint64_t rng = 12345;
  int errors = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<std::string> bad = states;
    std::string& blob = bad[static_cast<std::size_t>(trial % 2)];
    for (int flips = 0; flips < 1 + trial % 4; ++flips) {
      rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
      std::size_t at = 12 + (rng >> 33) % (blob.size() - 20);  // past magic + version, before the checksum
      blob[at] = static_cast<char>(blob[at] ^ (1 << ((rng >> 20) % 8)));
    }
    std::uint64_t sum = hash_bytes(blob.data(), blob.size() - 8);
    std::memcpy(&blob[blob.size() - 8], &sum, 8);
    try {
      World resumed(options(), 2, bad);
      resumed.steps(3);
    } catch (const Error&) {
      ++errors;
    }
  }
  EXPECT_GT(errors, 0);
}

// Forged states: each field set to a value no loader writes, the checksum recomputed (encode_state). Every
// one is refused with an error naming the field, before a single document is read.
TEST(LoaderState, ForgedStatesWithValidChecksumAreRefusedNamingTheField) {
  World w(options(), 2);
  w.steps(15);
  const std::vector<std::string> states = w.states();
  const SavedState real = decode_state(states[1]);
  ASSERT_FALSE(real.window.empty());
  ASSERT_FALSE(real.queue.empty());
  using Forge = std::function<void(SavedState&)>;
  const std::vector<std::pair<std::string, Forge>> forgeries = {
      {"rank = 2 is not below world_size = 2", [](SavedState& s) { s.rank = 2; }},
      {"world_size = 0", [](SavedState& s) { s.world_size = 0; }},
      {"world_size = 17 is not in [1, logical_shards = 16]", [](SavedState& s) { s.world_size = 17; }},
      {"seq_len = 0", [](SavedState& s) { s.seq_len = 0; }},
      {"logical_shards = 0", [](SavedState& s) { s.logical_shards = 0; }},
      {"shuffle_window = 0", [](SavedState& s) { s.shuffle_window = 0; }},
      {"block_bytes = 0", [](SavedState& s) { s.block_bytes = 0; }},
      {"eos = -7 is neither", [](SavedState& s) { s.eos = -7; }},
      {"more than shuffle_window = 1", [](SavedState& s) { s.shuffle_window = 1; }},
      {"more than the 1 it holds after 1 rows emitted", [](SavedState& s) { s.window_counter = 1; }},
      {"weight -1 is not >= 0", [](SavedState& s) { s.datasets[0].weight = -1; }},
      {"weight nan", [](SavedState& s) { s.datasets[0].weight = std::nan(""); }},
      {"has no name", [](SavedState& s) { s.datasets[0].name.clear(); }},
      {"bad records out of", [](SavedState& s) { s.datasets[0].bad_records = s.datasets[0].records_read + 1; }},
      {"bytes cannot hold", [](SavedState& s) { s.datasets[0].total_bytes = s.datasets[0].file_count - 1; }},
      {"7 shard cursors, but rank 1 of 2 owns 8", [](SavedState& s) {
         s.datasets[0].cursors.pop_back();
         s.datasets[0].fingerprints.pop_back();
       }},
      {"cursor #0 is for logical shard 2, expected 1", [](SavedState& s) { s.datasets[0].cursors[0].shard = 2; }},
      {"refers to file #", [](SavedState& s) { s.queue[0].doc.file = static_cast<std::uint32_t>(s.datasets[0].file_count); }},
      {"empty or reversed token range", [](SavedState& s) { s.queue[0].begin = s.queue[0].end; }},
      {"a row holds", [](SavedState& s) { s.window[0][0].end -= 1; }},
      {"which no shard cursor has reached", [](SavedState& s) { s.queue[0].doc.epoch = 5; }},
      {"beyond its", [](SavedState& s) { s.datasets[0].cursors[0].block_pos = 1000; }},
      {"a saved cursor is at document 1000000 of a block", [](SavedState& s) {
         for (ShardCursor& c : s.datasets[0].cursors) c.doc_pos = 1000000;
       }},
      {"describe dataset #0 differently", [](SavedState& s) { s.datasets[0].weight = 0.5; }},
      {"come from different runs", [](SavedState& s) { s.seq_len = 62; s.window.clear(); }},
  };
  for (const auto& [message, forge] : forgeries) {
    SavedState forged = real;
    forge(forged);
    std::vector<std::string> blobs = {states[0], encode_state(forged)};
    Loader fresh(options(), byte_encoder(), 1, 2);  // the owner of the forged rank's shards
    try {
      fresh.restore(blobs);
      for (int step = 0; step < 100; ++step) fresh.next();  // past the restored window and queue: new documents
      ADD_FAILURE() << "accepted a state with " << message;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
}

// Version 1 placed files read whole by their first byte; its shard positions mean other files in version 2.
// Version 2 filled the whole shuffle window before emitting; its window would continue in another order.
TEST(LoaderState, OldVersionStatesAreRefusedWithTheReason) {
  World w(options(), 1);
  w.steps(2);
  for (const auto& [version, reason] :
       {std::pair<std::uint32_t, const char*>{1, "format version 1, this build reads 4: version 2 places compressed "
                                                 "and .txt files in other logical shards"},
        std::pair<std::uint32_t, const char*>{2, "format version 2, this build reads 4: version 3 emits rows while "
                                                 "the shuffle window fills"}}) {
    std::string blob = w.states()[0];
    std::memcpy(&blob[8], &version, 4);
    const std::uint64_t sum = hash_bytes(blob.data(), blob.size() - 8);
    std::memcpy(&blob[blob.size() - 8], &sum, 8);
    try {
      decode_state(blob);
      ADD_FAILURE() << "a version " << version << " state was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
    }
  }
}

// Version 3 saved, with a prefetch thread, the rows it had made ahead (section REDY, handed out first on a
// resume); version 4 has no place for them, so such a state is refused saying why and what to do. A version 3
// state without them (every synchronous one) means the same as version 4 and is read.
TEST(LoaderState, Version3IsReadUnlessItHoldsPrefetchedRows) {
  World w(options(), 1);
  w.steps(2);
  const std::string v4 = w.states()[0];
  auto as_version_3 = [&](std::uint64_t redy_rows) {
    std::string blob = v4.substr(0, v4.size() - 8);
    const std::uint32_t version = 3;
    std::memcpy(&blob[8], &version, 4);
    std::string payload(8, '\0');
    std::memcpy(&payload[0], &redy_rows, 8);
    for (std::uint64_t i = 0; i < redy_rows; ++i) {  // one span of a row: its count, then 28 bytes
      const std::uint64_t spans = 1;
      payload.append(reinterpret_cast<const char*>(&spans), 8).append(28, '\1');
    }
    const std::uint64_t length = payload.size();
    blob.append("REDY", 4).append(reinterpret_cast<const char*>(&length), 8).append(payload);
    const std::uint64_t sum = hash_bytes(blob.data(), blob.size());
    return blob.append(reinterpret_cast<const char*>(&sum), 8);
  };
  EXPECT_EQ(encode_state(decode_state(as_version_3(0))), v4);
  try {
    decode_state(as_version_3(3));
    ADD_FAILURE() << "a version 3 state with prefetched rows was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("format version 3 with 3 rows that its prefetch thread had prepared but not "
                                         "handed out"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("data.prefetch_rows = 0"), std::string::npos) << e.what();
  }
}

// A dataset renamed between runs used to restart silently (a removed dataset plus a new one); it is refused
// naming both names, unless allow_corpus_change. Adding a dataset with other files stays allowed.
TEST(LoaderState, RenamedDatasetIsReportedNotRestarted) {
  World w(options(), 2);
  w.steps(10);
  LoaderOptions renamed = small_options({{"licenses-v2", license_corpus(), 1.0, "text"}});
  Loader fresh(renamed, byte_encoder(), 0, 2);
  try {
    fresh.restore(w.states());
    ADD_FAILURE() << "a renamed dataset was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("dataset 'licenses-v2' has the files of the saved dataset 'licenses'"),
              std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Rename it back to 'licenses'"), std::string::npos) << e.what();
  }
  renamed.allow_corpus_change = true;
  Loader allowed(renamed, byte_encoder(), 0, 2);
  allowed.restore(w.states());
  allowed.next();
  TempDir other("renamed-other");
  write_generated_corpus(other.path(), 2, 20, 8);
  LoaderOptions added = small_options({{"licenses", license_corpus(), 1.0, "text"}, {"other", other.path(), 1.0, "text"}});
  Loader grown(added, byte_encoder(), 0, 2);
  grown.restore(w.states());
  grown.next();
}

// Corpora of equal-length documents, so that rows hold the same number of pieces whatever the corpus size.
void write_uniform_corpus(const std::string& dir, int files, int docs_per_file) {
  for (int f = 0; f < files; ++f) {
    std::string content;
    char line[96];
    for (int i = 0; i < docs_per_file; ++i) {
      std::snprintf(line, sizeof line, "{\"text\": \"document %09d of file %03d with some words\"}\n", i, f);
      content += line;
    }
    write_file(dir + "/part-" + std::to_string(1000 + f) + ".jsonl", content);
  }
}

TEST(LoaderState, SizeDoesNotGrowWithTheCorpus) {
  TempDir small("state-small"), large("state-large");
  write_uniform_corpus(small.path(), 4, 250);        // 10^3 documents
  write_uniform_corpus(large.path(), 10, 100000);    // 10^6 documents
  std::size_t sizes[2];
  int i = 0;
  for (const std::string& dir : {small.path(), large.path()}) {
    LoaderOptions o = small_options({{"uniform", dir, 1.0, "text"}});
    o.logical_shards = 64;
    o.shuffle_window = 32;
    World w(o, 4);
    w.steps(30);
    sizes[i++] = w.states()[1].size();
  }
  EXPECT_EQ(sizes[0], sizes[1]);
  EXPECT_LT(sizes[0], 16u * 1024);
}

TEST(LoaderState, CorpusDriftIsDetectedAndCanBeAllowed) {
  TempDir dir("drift");
  write_generated_corpus(dir.path(), 3, 100, 20);
  LoaderOptions o = small_options({{"gen", dir.path(), 1.0, "text"}});
  World before(o, 2);
  before.steps(10);
  const std::vector<std::string> states = before.states();
  // Same size, new content and modification time.
  std::string victim = dir / "part-001.jsonl";
  std::string content = read_file(victim);
  content[content.find("w")] = 'W';
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  write_file(victim, content);
  try {
    World after(o, 2, states);
    FAIL() << "drift not detected";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("part-001.jsonl"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("allow_corpus_change"), std::string::npos) << e.what();
  }
  // A removed file changes the listing: also detected.
  std::filesystem::remove(dir / "part-002.jsonl");
  EXPECT_THROW(World(o, 2, states), Error);
  // Opt-in: the dataset starts its next epoch on the new files.
  o.allow_corpus_change = true;
  World after(o, 2, states);
  after.steps(5);
  for (const auto& batch : after.provenance[0])
    for (const auto& row : batch)
      for (const auto& span : row.spans) EXPECT_GE(span.epoch, 1u);
}

// The byte encoder with another fingerprint: a "different tokenizer".
class OtherEncoder final : public DocumentEncoder {
 public:
  void encode(std::string_view text, std::vector<TokenId>& out) const override { ByteEncoder().encode(text, out); }
  std::uint64_t fingerprint() const override { return 42; }
};

TEST(LoaderState, TokenizerDriftIsDetectedAndCanBeAllowed) {
  LoaderOptions o = options();
  World before(o, 2);
  before.steps(10);
  auto other = std::make_shared<OtherEncoder>();
  EXPECT_THROW(World(o, 2, before.states(), other), Error);
  o.allow_corpus_change = true;
  World after(o, 2, before.states(), other);
  after.steps(3);
  EXPECT_GT(after.ranks[0]->stats().dropped_spans + after.ranks[1]->stats().dropped_spans, 0u);
}

TEST(LoaderState, SeedOrLogicalShardsChangeIsRefused) {
  LoaderOptions o = options();
  World before(o, 2);
  before.steps(2);
  LoaderOptions seed = o;
  seed.seed += 1;
  EXPECT_THROW(World(seed, 2, before.states()), Error);
  LoaderOptions shards = o;
  shards.logical_shards = 32;
  EXPECT_THROW(World(shards, 2, before.states()), Error);
}

}  // namespace
}  // namespace llmtrain::data::testing
