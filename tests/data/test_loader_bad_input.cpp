// Bad input under both policies: malformed JSON, missing or non-string field, invalid UTF-8, empty and
// unreadable files, truncated .gz / .zst streams. "skip" delivers every good document exactly once and counts
// the bad records per file; "fail" stops with an error naming the file; max_bad_fraction bounds skipping.
#include <gtest/gtest.h>
#include <zlib.h>
#include <zstd.h>

#include <filesystem>

#include "loader_test_util.hpp"

namespace llmtrain::data::testing {
namespace {

std::string good_lines(int n, const std::string& tag) {
  std::string s;
  for (int i = 0; i < n; ++i) s += "{\"text\": \"good " + tag + " document number " + std::to_string(i) + "\"}\n";
  return s;
}

std::string gzip(const std::string& data) {
  uLongf size = compressBound(data.size()) + 32;
  std::string out(size, '\0');
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);  // +16: gzip wrapper
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string zstd(const std::string& data) {
  std::string out(ZSTD_compressBound(data.size()), '\0');
  out.resize(ZSTD_compress(out.data(), out.size(), data.data(), data.size(), 3));
  return out;
}

struct BadCase {
  std::string name;
  std::string file;     // file name of the bad input
  std::string content;  // its content
  bool remove_after_listing = false;
};

std::vector<BadCase> cases() {
  std::string big = good_lines(300, "z");
  return {
      {"malformed JSON", "bad.jsonl", good_lines(3, "a") + "{\"text\": \"unterminated\n" + good_lines(2, "b")},
      {"missing field", "bad.jsonl", good_lines(3, "a") + "{\"body\": \"no text field\"}\n"},
      {"non-string field", "bad.jsonl", good_lines(3, "a") + "{\"text\": 42}\n{\"text\": null}\n"},
      {"not an object", "bad.jsonl", "[1, 2, 3]\n" + good_lines(3, "a")},
      {"invalid UTF-8 in JSON", "bad.jsonl", good_lines(3, "a") + "{\"text\": \"bad \xff\xfe bytes\"}\n"},
      {"invalid UTF-8 in text file", "bad.txt", "plain text with \xc3\x28 an invalid sequence"},
      {"empty file", "empty.jsonl", ""},
      {"unreadable file", "gone.jsonl", good_lines(5, "gone"), true},
      {"truncated gzip", "cut.jsonl.gz", gzip(big).substr(0, gzip(big).size() / 2)},
      {"truncated zstd", "cut.jsonl.zst", zstd(big).substr(0, zstd(big).size() / 2)},
      {"garbage gzip", "junk.jsonl.gz", std::string("\x1f\x8b\x08\x00garbage garbage garbage", 28)},
  };
}

TEST(LoaderBadInput, SkipDeliversEveryGoodDocumentAndCountsTheBadOnes) {
  for (const BadCase& c : cases()) {
    SCOPED_TRACE(c.name);
    TempDir dir("bad-skip");
    write_file(dir / "good.jsonl", good_lines(20, "g"));
    write_file(dir / c.file, c.content);
    LoaderOptions o = small_options({{"mixed", dir.path(), 1.0, "text"}}, 31);
    o.max_bad_fraction = 1.0;
    o.logical_shards = 4;
    auto loader = std::make_unique<World>(o, 1);
    if (c.remove_after_listing) std::filesystem::remove(dir / c.file);
    Corpus corpus = scan_corpus(o, ByteEncoder());
    Coverage cov;
    loader->run_through_epoch(0, &cov, &corpus);
    cov.expect_exactly(corpus, 0);
    LoaderStats st = loader->ranks[0]->stats();
    EXPECT_GE(st.bad_records_by_file[dir / c.file], 1u) << "bad record not counted";
    if (c.name != "empty file") {
      EXPECT_GE(st.datasets[0].bad_records, 1u);
    }
  }
}

TEST(LoaderBadInput, FailStopsWithTheFileName) {
  for (const BadCase& c : cases()) {
    SCOPED_TRACE(c.name);
    TempDir dir("bad-fail");
    write_file(dir / "good.jsonl", good_lines(20, "g"));
    write_file(dir / c.file, c.content);
    LoaderOptions o = small_options({{"mixed", dir.path(), 1.0, "text"}}, 31);
    o.on_bad_record = BadRecordPolicy::fail;
    o.logical_shards = 4;
    try {
      World w(o, 1);
      if (c.remove_after_listing) std::filesystem::remove(dir / c.file);
      w.run_through_epoch(0, nullptr, nullptr, 1000);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(c.file), std::string::npos) << e.what();
    }
  }
}

// A dataset whose only record is bad (a non-UTF-8 .txt file is one record) gives no document: the error names
// the file, the reason and the counts, as the max_bad_fraction error does for a .jsonl dataset.
TEST(LoaderBadInput, ADatasetOfOnlyBadRecordsSaysWhichAndWhy) {
  TempDir dir("only-bad");
  write_file(dir / "latin1.txt", "caf\xe9 cr\xe8me, in ISO-8859-1");
  LoaderOptions o = small_options({{"latin", dir.path(), 1.0, "text"}}, 31);
  o.max_bad_fraction = 1.0;
  o.logical_shards = 4;
  Loader loader(o, byte_encoder(), 0, 1);
  try {
    loader.next();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    // The one record is read again in each epoch until the loader gives up: as many bad as read.
    const std::string read = std::to_string(loader.stats().datasets[0].records_read);
    EXPECT_NE(what.find("'latin': only bad records in the 1 non-empty logical shard on this rank: " + read + " bad of " +
                        read + " records read, skipped (data.on_bad_record = \"skip\"); the last: " +
                        (dir / "latin1.txt") + ": byte 0: invalid UTF-8"),
              std::string::npos)
        << what;
    EXPECT_EQ(what.find("see the counts"), std::string::npos) << what;
  }
}

TEST(LoaderBadInput, TooManyBadRecordsIsAnError) {
  TempDir dir("bad-fraction");
  std::string content = good_lines(100, "g");
  for (int i = 0; i < 100; ++i) content += "{not json}\n";
  write_file(dir / "half.jsonl", content);
  LoaderOptions o = small_options({{"half", dir.path(), 1.0, "text"}}, 31);
  o.max_bad_fraction = 0.1;
  o.logical_shards = 2;
  try {
    World w(o, 1);
    w.run_through_epoch(0, nullptr, nullptr, 1000);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("max_bad_fraction"), std::string::npos) << e.what();
  }
}

TEST(LoaderBadInput, BadOptionsAreErrors) {
  TempDir dir("bad-options");
  write_file(dir / "a.jsonl", good_lines(5, "a"));
  LoaderOptions good = small_options({{"a", dir.path(), 1.0, "text"}});
  auto expect_error = [&](LoaderOptions o, int world = 1) {
    EXPECT_THROW(Loader(o, byte_encoder(), 0, world), Error);
  };
  LoaderOptions o = good;
  o.seq_len = 0;
  expect_error(o);
  o = good;
  o.datasets.push_back(good.datasets[0]);
  expect_error(o);  // duplicate name
  o = good;
  o.datasets[0].weight = -1;
  expect_error(o);
  o = good;
  o.datasets[0].path = dir / "missing";
  expect_error(o);
  expect_error(good, 17);  // more ranks than logical shards
  // A dataset that is empty on every rank: the first batch says so instead of hanging.
  TempDir empty("all-bad");
  write_file(empty / "bad.jsonl", "{\"other\": 1}\n");
  o = small_options({{"bad", empty.path(), 1.0, "text"}});
  o.max_bad_fraction = 1.0;
  Loader loader(o, byte_encoder(), 0, 1);
  EXPECT_THROW(loader.next(), Error);
}

// A file truncated while the run reads it (here at a line boundary, so nothing looks malformed) used to be
// under-read silently: its later blocks simply held fewer records. Its size is now compared with the one the
// schedule was planned with: "fail" stops naming the file and both sizes, "skip" counts each later block.
TEST(LoaderBadInput, FileTruncatedDuringTheRunIsDetected) {
  for (BadRecordPolicy policy : {BadRecordPolicy::fail, BadRecordPolicy::skip}) {
    TempDir dir("truncated");
    write_generated_corpus(dir.path(), 2, 200, 6);
    const std::string victim = dir / "part-001.jsonl";
    LoaderOptions o = small_options({{"d", dir.path(), 1.0, "text"}});
    o.block_bytes = 1024;  // several blocks per logical shard: most are opened after the truncation
    o.on_bad_record = policy;
    o.max_bad_fraction = 1;
    World w(o, 1);
    w.steps(1);
    const std::string content = read_file(victim);
    const std::size_t cut = content.find('\n', content.size() / 2) + 1;
    std::filesystem::resize_file(victim, cut);
    expect_size_change_reported(w, policy, victim, content.size(), cut);
  }
}

}  // namespace
}  // namespace llmtrain::data::testing
