// Pre-tokenized input: .ltok files written by pretokenize and Megatron .bin/.idx pairs go through the same
// shards, shuffling, packing, mixing and state as raw text (every token exactly once per epoch, across a
// rescale, mixed with raw text, with several threads); pretokenize is resumable; damaged files fail with
// errors naming them; metadata-only simulation gives the same provenance and states as the normal one.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "llmtrain/data/pretokenize.hpp"
#include "llmtrain/data/simulate.hpp"
#include "loader_test_util.hpp"
#include "token_files.hpp"

namespace llmtrain::data::testing {
namespace {

std::vector<std::vector<TokenId>> sorted_documents(const Corpus& c) {
  std::vector<std::vector<TokenId>> docs;
  for (const auto& [key, tokens] : c.docs) docs.push_back(tokens);
  std::sort(docs.begin(), docs.end());
  return docs;
}

void expect_exactly_once_with_rescale(const LoaderOptions& o) {
  Corpus corpus = scan_corpus(o, ByteEncoder());
  Coverage cov;
  World first(o, 2);
  first.steps(10, &cov, &corpus);
  World second(o, 3, first.states());
  second.run_through_epoch(0, &cov, &corpus);
  cov.expect_exactly(corpus, 0);
}

// A Megatron pair with 16-bit tokens (dtype code 8) or 32-bit ones (code 4), one sequence per document.
void write_megatron(const std::string& prefix, const std::vector<std::vector<TokenId>>& docs, char dtype_code = 8) {
  std::string bin, idx("MMIDIDX\0\0", 9);
  auto put = [&idx](const void* p, std::size_t n) { idx.append(static_cast<const char*>(p), n); };
  std::uint64_t version = 1, count = docs.size(), doc_entries = docs.size() + 1;
  put(&version, 8);
  idx.push_back(dtype_code);
  put(&count, 8);
  put(&doc_entries, 8);
  std::vector<std::int64_t> pointers;
  for (const auto& d : docs) {
    std::int32_t size = static_cast<std::int32_t>(d.size());
    put(&size, 4);
    pointers.push_back(static_cast<std::int64_t>(bin.size()));
    for (TokenId t : d) {
      std::uint16_t v = static_cast<std::uint16_t>(t);
      if (dtype_code == 4) bin.append(reinterpret_cast<const char*>(&t), 4);
      else bin.append(reinterpret_cast<const char*>(&v), 2);
    }
  }
  put(pointers.data(), 8 * pointers.size());
  for (std::int64_t i = 0; i <= static_cast<std::int64_t>(docs.size()); ++i) put(&i, 8);
  write_file(prefix + ".bin", bin);
  write_file(prefix + ".idx", idx);
}

// An .ltok with 4-byte tokens (a vocabulary above 65,536): the loader reads those straight into a block.
void write_ltok4(const std::string& path, const std::vector<std::vector<TokenId>>& docs) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  TokenFileWriter writer(path, std::uint64_t{1} << 17, ByteEncoder().fingerprint());
  for (const auto& d : docs) writer.add(d);
  writer.finish();
}

std::string error_of(const LoaderOptions& o) {
  try {
    World w(o, 1);
    w.steps(50);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(TokenFiles, PretokenizedCorpusHoldsTheSameDocumentsAndIsDeliveredExactlyOnce) {
  TempDir dir("ltok");
  PretokenizeReport r = pretokenize_licenses(dir.path());
  EXPECT_EQ(r.files_written, 7u);  // one per input file: 4 JSON Lines (plain, .gz, .zst) and 3 .txt
  LoaderOptions raw = small_options({{"licenses", license_corpus(), 1.0, "text"}});
  LoaderOptions ltok = small_options({{"licenses", dir / "licenses", 1.0, "text"}});
  EXPECT_EQ(sorted_documents(scan_corpus(ltok, ByteEncoder())), sorted_documents(scan_corpus(raw, ByteEncoder())));
  expect_exactly_once_with_rescale(ltok);
  ltok.threads = 3;
  expect_exactly_once_with_rescale(ltok);
}

TEST(TokenFiles, MegatronPairIsDeliveredExactlyOnceKeyedByPointer) {
  TempDir dir("megatron");
  LoaderOptions raw = small_options({{"licenses", license_corpus(), 1.0, "text"}});
  write_megatron(dir / "mix_text_document", sorted_documents(scan_corpus(raw, ByteEncoder())));
  LoaderOptions o = small_options({{"megatron", dir / "mix_text_document.bin", 1.0, "text"}});
  Corpus corpus = scan_corpus(o, ByteEncoder());
  EXPECT_EQ(sorted_documents(corpus), sorted_documents(scan_corpus(raw, ByteEncoder())));
  EXPECT_EQ(corpus.docs.begin()->first.second, 0u);  // the first document starts at byte 0 of the .bin
  expect_exactly_once_with_rescale(o);
}

// int32 tokens (a 4-byte .ltok, a Megatron pair of dtype code 4) are read straight into the block's storage,
// the records pointing into it: the same documents, each exactly once, a document without tokens skipped, a
// negative id an error naming the file.
TEST(TokenFiles, FourByteTokensAreReadInPlaceAndDeliveredExactlyOnce) {
  TempDir dir("ltok4");
  LoaderOptions raw = small_options({{"licenses", license_corpus(), 1.0, "text"}});
  std::vector<std::vector<TokenId>> docs = sorted_documents(scan_corpus(raw, ByteEncoder()));
  std::vector<std::vector<TokenId>> with_empty = docs;
  with_empty.insert(with_empty.begin() + 3, std::vector<TokenId>{});
  write_ltok4(dir / "l/all.ltok", with_empty);
  write_megatron(dir / "m/all", with_empty, 4);
  for (const std::string& path : {dir / "l/all.ltok", dir / "m/all.bin"}) {
    SCOPED_TRACE(path);
    LoaderOptions o = small_options({{"t", path, 1.0, "text"}});
    EXPECT_EQ(sorted_documents(scan_corpus(o, ByteEncoder())), docs);
    expect_exactly_once_with_rescale(o);
  }
  std::string bytes = read_file(dir / "l/all.ltok");
  bytes[kTokenFileHeaderBytes + 4 * 5 + 3] = static_cast<char>(0x80);  // the sixth token of the first document
  write_file(dir / "bad/x.ltok", bytes);
  const std::string e = error_of(small_options({{"bad", dir / "bad/x.ltok", 1.0, "text"}}));
  EXPECT_NE(e.find("x.ltok: the document at byte 64 holds a negative token id"), std::string::npos) << e;
}

TEST(TokenFiles, RawTextAndBothTokenFormatsMixInOneRun) {
  TempDir dir("mixed");
  pretokenize_licenses(dir.path());
  LoaderOptions raw = small_options({{"t", license_corpus() + "/gpl-3.jsonl", 1.0, "text"}});
  write_megatron(dir / "gpl", sorted_documents(scan_corpus(raw, ByteEncoder())));
  LoaderOptions o = small_options({{"raw", license_corpus() + "/lgpl-2.1.jsonl", 0.5, "text"},
                                   {"ltok", dir / "licenses/gpl-3.jsonl.ltok", 0.3, "text"},
                                   {"megatron", dir / "gpl.bin", 0.2, "text"}});
  expect_exactly_once_with_rescale(o);
  LoaderOptions threaded = o;
  threaded.threads = 3;
  World one(o, 2), many(threaded, 2);
  one.steps(20);
  many.steps(20);
  for (std::size_t r = 0; r < 2; ++r)
    for (std::size_t s = 0; s < 20; ++s) ASSERT_EQ(one.batches[r][s].tokens, many.batches[r][s].tokens);
  EXPECT_TRUE(one.states() == many.states());
}

TEST(TokenFiles, MetadataOnlySimulationHasTheSameProvenanceAndStatesAcrossARescale) {
  TempDir dir("metadata");
  pretokenize_licenses(dir.path());
  write_megatron(dir / "gpl", sorted_documents(scan_corpus(
                                  small_options({{"t", license_corpus() + "/gpl-3.jsonl", 1.0, "text"}}), ByteEncoder())));
  LoaderOptions o = small_options({{"ltok", dir / "licenses", 0.7, "text"}, {"megatron", dir / "gpl.bin", 0.3, "text"}});
  o.threads = 1;  // metadata-only counts tokens in the loader's thread
  // Each mode: 3 ranks, then a rescale to 5 from the saved states, then a fresh audit over several epochs.
  std::string logs[2];
  for (bool metadata_only : {false, true}) {
    const std::string m = metadata_only ? "meta-" : "full-";
    std::ostringstream log;
    simulate(o, byte_encoder(), {3, 30, 2, "", dir / (m + "s1"), dir / (m + "p1.jsonl"), false, metadata_only}, log);
    simulate(o, byte_encoder(), {5, 20, 2, dir / (m + "s1"), dir / (m + "s2"), dir / (m + "p2.jsonl"), false,
                                 metadata_only}, log);
    EXPECT_EQ(simulate(o, byte_encoder(), {3, 600, 2, "", "", "", true, metadata_only}, log), 0u) << log.str();
    logs[metadata_only] = log.str();
  }
  EXPECT_EQ(logs[1], logs[0]);  // per-rank summaries and the audit report
  EXPECT_NE(logs[1].find("exactly once: yes"), std::string::npos) << logs[1];
  for (const char* file : {"p1.jsonl", "p2.jsonl"}) {
    EXPECT_FALSE(read_file(dir / (std::string("full-") + file)).empty()) << file;
    EXPECT_EQ(read_file(dir / (std::string("meta-") + file)), read_file(dir / (std::string("full-") + file))) << file;
  }
  for (const char* states : {"s1", "s2"})
    EXPECT_EQ(load_state_dir(dir / (std::string("meta-") + states)),
              load_state_dir(dir / (std::string("full-") + states))) << states;
}

TEST(TokenFiles, MetadataOnlyRefusesRawTextNamingTheDataset) {
  LoaderOptions o = small_options({{"raw", license_corpus(), 1.0, "text"}});
  o.metadata_only = true;
  o.threads = 1;
  const std::string error = error_of(o);
  EXPECT_NE(error.find("dataset 'raw': metadata-only needs pre-tokenized datasets; run llmtrain-data pretokenize"),
            std::string::npos) << error;
}

TEST(TokenFiles, PretokenizeIsResumableAndRewritesDamagedOutputs) {
  TempDir dir("resume");
  PretokenizeReport first = pretokenize_licenses(dir.path());
  PretokenizeReport again = pretokenize_licenses(dir.path(), 1);
  EXPECT_EQ(again.files_written, 0u);
  EXPECT_EQ(again.files_kept, first.files_written);
  const std::string victim = dir / "licenses/gpl-3.jsonl.ltok";
  std::string bytes = read_file(victim);
  bytes[100] ^= 1;  // a token: only the checksum sees it
  write_file(victim, bytes);
  std::string why;
  EXPECT_FALSE(verify_token_file(victim, ByteEncoder().fingerprint(), why));
  EXPECT_EQ(why, "checksum mismatch");
  PretokenizeReport repaired = pretokenize_licenses(dir.path());
  EXPECT_EQ(repaired.files_written, 1u);
  EXPECT_TRUE(verify_token_file(victim, ByteEncoder().fingerprint(), why)) << why;
}

TEST(TokenFiles, DamagedFilesFailWithErrorsNamingThem) {
  TempDir dir("damaged");
  pretokenize_licenses(dir.path());
  const std::string good = dir / "licenses/gpl-3.jsonl.ltok";
  std::string bytes = read_file(good);
  auto ltok_error = [&](const std::string& content) {
    write_file(dir / "bad/x.ltok", content);
    return error_of(small_options({{"bad", dir / "bad/x.ltok", 1.0, "text"}}));
  };
  std::string e = ltok_error(bytes.substr(0, bytes.size() - 5));
  EXPECT_NE(e.find("x.ltok: truncated or corrupt token file"), std::string::npos) << e;
  std::string header = bytes;
  header[20] ^= 1;
  e = ltok_error(header);
  EXPECT_NE(e.find("x.ltok: corrupt token file header"), std::string::npos) << e;
  e = ltok_error("not a token file at all, but long enough to hold a header of sixty-four bytes......");
  EXPECT_NE(e.find("x.ltok: not an llmtrain token file"), std::string::npos) << e;

  LoaderOptions raw = small_options({{"t", license_corpus() + "/gpl-3.jsonl", 1.0, "text"}});
  write_megatron(dir / "m/data", sorted_documents(scan_corpus(raw, ByteEncoder())));
  LoaderOptions megatron = small_options({{"m", dir / "m/data.bin", 1.0, "text"}});
  std::string idx = read_file(dir / "m/data.idx");
  write_file(dir / "m/data.idx", idx.substr(0, idx.size() - 3));
  e = error_of(megatron);
  EXPECT_NE(e.find("data.idx: truncated or corrupt Megatron index"), std::string::npos) << e;
  std::string magic = idx;
  magic[0] = 'X';
  write_file(dir / "m/data.idx", magic);
  e = error_of(megatron);
  EXPECT_NE(e.find("data.idx: not a Megatron index"), std::string::npos) << e;
  std::string sizes = idx;
  std::int32_t huge = 1 << 30;
  std::memcpy(sizes.data() + 34, &huge, 4);  // the first sequence now runs past the end of the .bin
  write_file(dir / "m/data.idx", sizes);
  e = error_of(megatron);
  EXPECT_NE(e.find("lies outside"), std::string::npos) << e;
  std::filesystem::remove(dir / "m/data.idx");
  e = error_of(megatron);
  EXPECT_NE(e.find("data.idx: cannot open"), std::string::npos) << e;
}

// Token files of each kind under `dir`: a 2-byte and a 4-byte .ltok, a Megatron .bin.
std::vector<std::string> token_files_of_each_kind(const std::string& dir) {
  pretokenize_licenses(dir);
  std::vector<std::vector<TokenId>> docs =
      sorted_documents(scan_corpus(small_options({{"t", license_corpus() + "/gpl-3.jsonl", 1.0, "text"}}), ByteEncoder()));
  write_ltok4(dir + "/four/gpl-3.ltok", docs);
  write_megatron(dir + "/gpl-3", docs);
  return {dir + "/licenses/gpl-3.jsonl.ltok", dir + "/four/gpl-3.ltok", dir + "/gpl-3.bin"};
}

// The token file `path` mixed with raw text, so that a run always has valid documents to deliver.
LoaderOptions token_file_with_text(const std::string& path, BadRecordPolicy policy) {
  LoaderOptions o = small_options({{"t", path, 0.5, "text"}, {"raw", license_corpus() + "/lgpl-2.1.jsonl", 0.5, "text"}});
  o.block_bytes = 1024;  // several blocks per logical shard: most are opened after the change
  o.on_bad_record = policy;
  o.max_bad_fraction = 1;
  return o;
}

// A token file truncated in place while the run reads it. It is never read past its new end (through a map,
// that raised SIGBUS), and the size change goes through on_bad_record like a text file's: "fail" stops naming
// the file and both sizes, "skip" counts each later block that reaches past the end. The file was opened
// before the truncation (the listing's read of every document), so its blocks are read from the open file.
TEST(TokenFiles, FileTruncatedInPlaceDuringTheRunIsReportedNotReadPastItsEnd) {
  for (BadRecordPolicy policy : {BadRecordPolicy::fail, BadRecordPolicy::skip}) {
    TempDir dir("ltok-truncated");
    for (const std::string& victim : token_files_of_each_kind(dir.path())) {
      SCOPED_TRACE(victim);
      const LoaderOptions o = token_file_with_text(victim, policy);
      scan_corpus(o, ByteEncoder());
      World w(o, 1);
      w.steps(1);
      const std::uint64_t planned = std::filesystem::file_size(victim);
      std::filesystem::resize_file(victim, planned / 2);
      expect_size_change_reported(w, policy, victim, planned, planned / 2);
    }
  }
}

// A token file extended in place (appended to) after the listing. Not yet open, it is reported as a size change
// when it opens, under either policy. Already open, its listed bytes are still there and are what the run
// reads: the listed documents, each exactly once, nothing reported.
TEST(TokenFiles, FileExtendedInPlaceIsReportedWhenItOpensAndReadAsListedWhenOpen) {
  for (BadRecordPolicy policy : {BadRecordPolicy::fail, BadRecordPolicy::skip}) {
    TempDir dir("ltok-extended");
    for (const std::string& victim : token_files_of_each_kind(dir / "unopened")) {
      SCOPED_TRACE(victim);
      World w(token_file_with_text(victim, policy), 1);
      const std::uint64_t planned = std::filesystem::file_size(victim);
      std::ofstream(victim, std::ios::binary | std::ios::app) << std::string(100, 'x');
      expect_size_change_reported(w, policy, victim, planned, planned + 100);
    }
    for (const std::string& victim : token_files_of_each_kind(dir / "open")) {
      SCOPED_TRACE(victim);
      const LoaderOptions o = token_file_with_text(victim, policy);
      const Corpus corpus = scan_corpus(o, ByteEncoder());  // opens it
      World w(o, 1);
      std::ofstream(victim, std::ios::binary | std::ios::app) << std::string(100, 'x');
      Coverage cov;
      w.run_through_epoch(0, &cov, &corpus);
      cov.expect_exactly(corpus, 0);
      EXPECT_TRUE(w.ranks[0]->stats().bad_records_by_file.empty());
    }
  }
}

}  // namespace
}  // namespace llmtrain::data::testing
