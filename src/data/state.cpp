// Binary encoding of the loader state (see state.hpp).
#include "state.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "llmtrain/core/error.hpp"
#include "llmtrain/data/loader.hpp"
#include "permutation.hpp"

namespace llmtrain::data {
namespace {

constexpr char kMagic[8] = {'L', 'L', 'M', 'T', 'D', 'A', 'T', 'A'};

std::uint32_t tag(const char (&name)[5]) {
  std::uint32_t t;
  std::memcpy(&t, name, 4);
  return t;
}

class Writer {
 public:
  template <typename T>
  void put(T v) {
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void put_string(const std::string& s) {
    put<std::uint64_t>(s.size());
    out += s;
  }
  void put_span(const Span& s) {
    put(s.doc.dataset);
    put(s.doc.file);
    put(s.doc.byte_offset);
    put(s.doc.epoch);
    put(s.begin);
    put(s.end);
  }
  // Appends `body` as a section.
  void section(const char (&name)[5], const Writer& body) {
    put(tag(name));
    put<std::uint64_t>(body.out.size());
    out += body.out;
  }
  std::string out;
};

class Reader {
 public:
  Reader(const char* p, std::size_t n) : p_(p), n_(n) {}
  template <typename T>
  T get() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, p_ + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  std::string get_string() {
    std::uint64_t n = get<std::uint64_t>();
    need(n);
    std::string s(p_ + pos_, n);
    pos_ += n;
    return s;
  }
  Span get_span() {
    Span s;
    s.doc.dataset = get<std::uint32_t>();
    s.doc.file = get<std::uint32_t>();
    s.doc.byte_offset = get<std::uint64_t>();
    s.doc.epoch = get<std::uint32_t>();
    s.begin = get<std::uint32_t>();
    s.end = get<std::uint32_t>();
    return s;
  }
  // A count of items of at least `item_bytes` each, checked against what is left (no huge allocations).
  std::uint64_t get_count(std::size_t item_bytes) {
    std::uint64_t n = get<std::uint64_t>();
    LLMTRAIN_CHECK(n <= (n_ - pos_) / item_bytes, "data loader state: count ", n, " exceeds the blob");
    return n;
  }
  Reader sub(std::uint64_t n) {
    need(n);
    Reader r(p_ + pos_, n);
    pos_ += n;
    return r;
  }
  bool done() const { return pos_ == n_; }

 private:
  void need(std::uint64_t n) const {
    LLMTRAIN_CHECK(n <= n_ - pos_, "data loader state is truncated or malformed (at byte ", pos_, ")");
  }
  const char* p_;
  std::size_t n_, pos_ = 0;
};

constexpr std::size_t kSpanBytes = 28;

}  // namespace

std::string encode_state(const SavedState& s) {
  Writer out;
  out.out.append(kMagic, sizeof kMagic);
  out.put(kStateVersion);
  Writer head;
  for (std::uint64_t v : {std::uint64_t{s.rank}, std::uint64_t{s.world_size}, s.seq_len, s.seed, s.logical_shards,
                          s.shuffle_window, s.block_bytes, s.encoder_fingerprint, s.window_counter})
    head.put(v);
  head.put(s.bos);
  head.put(s.eos);
  out.section("HEAD", head);
  for (const SavedDataset& d : s.datasets) {
    Writer w;
    w.put_string(d.name);
    w.put(d.weight);
    for (std::uint64_t v : {d.file_count, d.total_bytes, d.tokens_since_weights, d.draw_counter, d.records_read,
                            d.bad_records})
      w.put(v);
    w.put<std::uint64_t>(d.cursors.size());
    for (std::size_t i = 0; i < d.cursors.size(); ++i) {
      w.put(d.cursors[i].shard);
      w.put(d.cursors[i].epoch);
      w.put(d.cursors[i].block_pos);
      w.put(d.cursors[i].doc_pos);
      w.put(d.fingerprints[i]);
    }
    out.section("DSET", w);
  }
  Writer rows;
  rows.put<std::uint64_t>(s.window.size());
  for (const auto& row : s.window) {
    rows.put<std::uint64_t>(row.size());
    for (const Span& span : row) rows.put_span(span);
  }
  out.section("ROWS", rows);
  Writer queue;
  queue.put<std::uint64_t>(s.queue.size());
  for (const Span& span : s.queue) queue.put_span(span);
  out.section("QUEU", queue);
  out.put(hash_bytes(out.out.data(), out.out.size()));
  return out.out;
}

SavedState decode_state(const std::string& blob) {
  LLMTRAIN_CHECK(blob.size() >= sizeof kMagic + 12 && std::memcmp(blob.data(), kMagic, sizeof kMagic) == 0,
                 "not a data loader state (bad magic)");
  std::size_t body = blob.size() - 8;
  std::uint64_t stored;
  std::memcpy(&stored, blob.data() + body, 8);
  LLMTRAIN_CHECK(stored == hash_bytes(blob.data(), body), "data loader state is corrupt (checksum mismatch)");
  Reader in(blob.data() + sizeof kMagic, body - sizeof kMagic);
  std::uint32_t version = in.get<std::uint32_t>();
  LLMTRAIN_CHECK(version != 1, "data loader state has format version 1, this build reads ", kStateVersion,
                 ": version 2 places compressed and .txt files in other logical shards (spread over the ranks), so "
                 "a version 1 position means other documents here. Finish that run with the build that wrote it, "
                 "or start a new run");
  LLMTRAIN_CHECK(version != 2, "data loader state has format version 2, this build reads ", kStateVersion,
                 ": version 3 emits rows while the shuffle window fills, so a version 2 window and row count would "
                 "continue in another order than the run that saved them. Finish that run with the build that wrote "
                 "it, or start a new run");
  LLMTRAIN_CHECK(version == 3 || version == kStateVersion, "data loader state has format version ", version,
                 ", this build reads ", kStateVersion, " (and version 3 without prefetched rows)");
  SavedState s;
  int heads = 0;
  while (!in.done()) {
    std::uint32_t t = in.get<std::uint32_t>();
    Reader r = in.sub(in.get<std::uint64_t>());
    if (t == tag("HEAD")) {
      ++heads;
      s.rank = static_cast<std::uint32_t>(r.get<std::uint64_t>());
      s.world_size = static_cast<std::uint32_t>(r.get<std::uint64_t>());
      s.seq_len = r.get<std::uint64_t>();
      s.seed = r.get<std::uint64_t>();
      s.logical_shards = r.get<std::uint64_t>();
      s.shuffle_window = r.get<std::uint64_t>();
      s.block_bytes = r.get<std::uint64_t>();
      s.encoder_fingerprint = r.get<std::uint64_t>();
      s.window_counter = r.get<std::uint64_t>();
      s.bos = r.get<std::int64_t>();
      s.eos = r.get<std::int64_t>();
    } else if (t == tag("DSET")) {
      SavedDataset d;
      d.name = r.get_string();
      d.weight = r.get<double>();
      d.file_count = r.get<std::uint64_t>();
      d.total_bytes = r.get<std::uint64_t>();
      d.tokens_since_weights = r.get<std::uint64_t>();
      d.draw_counter = r.get<std::uint64_t>();
      d.records_read = r.get<std::uint64_t>();
      d.bad_records = r.get<std::uint64_t>();
      std::uint64_t n = r.get_count(32);
      for (std::uint64_t i = 0; i < n; ++i) {
        ShardCursor c;
        c.shard = r.get<std::uint32_t>();
        c.epoch = r.get<std::uint32_t>();
        c.block_pos = r.get<std::uint64_t>();
        c.doc_pos = r.get<std::uint64_t>();
        d.cursors.push_back(c);
        d.fingerprints.push_back(r.get<std::uint64_t>());
      }
      s.datasets.push_back(std::move(d));
    } else if (t == tag("REDY") && version == 3) {
      // Version 3 saved, with a prefetch thread, the rows it had made but not handed out, to go first on resume;
      // version 4 saves only what was consumed, so such a row has no place here. Without them (every
      // synchronous state) version 3 is version 4.
      const std::uint64_t rows = r.get_count(8);
      LLMTRAIN_CHECK(rows == 0, "data loader state has format version 3 with ", rows, " rows that its prefetch "
                     "thread had prepared but not handed out (section REDY); this build (version ", kStateVersion,
                     ") saves only what was consumed and cannot resume them in their place. Finish that run with "
                     "the build that wrote it, or resume it with that build and data.prefetch_rows = 0 until its "
                     "next checkpoint, which this build then reads");
    } else if (t == tag("ROWS")) {
      std::uint64_t rows = r.get_count(8);
      for (std::uint64_t i = 0; i < rows; ++i) {
        std::vector<Span> row(r.get_count(kSpanBytes));
        for (Span& span : row) span = r.get_span();
        s.window.push_back(std::move(row));
      }
    } else if (t == tag("QUEU")) {
      std::uint64_t n = r.get_count(kSpanBytes);
      for (std::uint64_t i = 0; i < n; ++i) s.queue.push_back(r.get_span());
    }
  }
  LLMTRAIN_CHECK(heads == 1, "data loader state has ", heads, " HEAD sections, expected 1");
  validate_state(s);
  return s;
}

// The checksum only proves that the bytes are those written; a forged or buggy state can still hold values no
// loader writes. Each field is checked against its range and the others, so restore() never acts on them.
void validate_state(const SavedState& s) {
  auto bad = [](const auto&... what) { LLMTRAIN_FAIL("data loader state: ", what..., " (the state is damaged or forged)"); };
  if (s.logical_shards < 1 || s.logical_shards > INT32_MAX) bad("logical_shards = ", s.logical_shards, " is not in [1, 2^31)");
  if (s.world_size < 1 || s.world_size > s.logical_shards)
    bad("world_size = ", s.world_size, " is not in [1, logical_shards = ", s.logical_shards, "]");
  if (s.rank >= s.world_size) bad("rank = ", s.rank, " is not below world_size = ", s.world_size);
  if (s.seq_len < 1 || s.seq_len >= INT32_MAX) bad("seq_len = ", s.seq_len, " is not in [1, 2^31 - 1)");
  if (s.shuffle_window < 1 || s.shuffle_window > INT32_MAX) bad("shuffle_window = ", s.shuffle_window, " is not in [1, 2^31)");
  if (s.block_bytes < 1) bad("block_bytes = 0");
  for (const auto& [name, id] : {std::pair<const char*, std::int64_t>{"bos", s.bos}, {"eos", s.eos}})
    if (id < -1 || id > INT32_MAX) bad(name, " = ", id, " is neither -1 (none) nor a token id");
  if (s.window.size() > s.shuffle_window)
    bad("the shuffle window holds ", s.window.size(), " rows, more than shuffle_window = ", s.shuffle_window);
  // After n rows emitted the window held min(shuffle_window, 2 n) rows before giving one (loader.cpp).
  const std::uint64_t fill = s.window_counter == 0 ? 0 : std::min<std::uint64_t>(s.shuffle_window, 2 * s.window_counter) - 1;
  if (s.window.size() > fill)
    bad("the shuffle window holds ", s.window.size(), " rows, more than the ", fill, " it holds after ",
        s.window_counter, " rows emitted");
  // Rank r owns the logical shards s with s % W == r, each with exactly one cursor, in increasing order.
  const std::uint64_t owned = (s.logical_shards - s.rank + s.world_size - 1) / s.world_size;
  for (std::size_t k = 0; k < s.datasets.size(); ++k) {
    const SavedDataset& d = s.datasets[k];
    if (d.name.empty()) bad("dataset #", k, " has no name");
    for (std::size_t j = 0; j < k; ++j)
      if (s.datasets[j].name == d.name) bad("dataset '", d.name, "' appears twice");
    if (!std::isfinite(d.weight) || d.weight < 0) bad("dataset '", d.name, "': weight ", d.weight, " is not >= 0");
    if (d.total_bytes < d.file_count)
      bad("dataset '", d.name, "': ", d.total_bytes, " bytes cannot hold ", d.file_count, " non-empty files");
    if (d.bad_records > d.records_read)
      bad("dataset '", d.name, "': ", d.bad_records, " bad records out of ", d.records_read, " read");
    if (d.cursors.size() != owned)
      bad("dataset '", d.name, "': ", d.cursors.size(), " shard cursors, but rank ", s.rank, " of ", s.world_size,
          " owns ", owned, " of ", s.logical_shards, " logical shards");
    for (std::size_t i = 0; i < d.cursors.size(); ++i)
      if (d.cursors[i].shard != s.rank + i * s.world_size)
        bad("dataset '", d.name, "': cursor #", i, " is for logical shard ", d.cursors[i].shard, ", expected ",
            s.rank + i * s.world_size, " (rank ", s.rank, " of ", s.world_size, ")");
  }
  auto check_span = [&](const Span& span, const char* where) {
    if (span.doc.dataset >= s.datasets.size())
      bad(where, ": a piece refers to dataset #", span.doc.dataset, " of ", s.datasets.size());
    const SavedDataset& d = s.datasets[span.doc.dataset];
    if (span.doc.file >= d.file_count)
      bad(where, ": a piece of dataset '", d.name, "' refers to file #", span.doc.file, " of ", d.file_count);
    if (span.begin >= span.end) bad(where, ": a piece of dataset '", d.name, "' has the empty or reversed token range [",
                                    span.begin, ", ", span.end, ")");
  };
  for (const auto& row : s.window) {
    std::uint64_t tokens = 0;
    for (const Span& span : row) {
      check_span(span, "shuffle window");
      tokens += span.end - span.begin;
    }
    if (tokens != s.seq_len + 1)
      bad("shuffle window: a row holds ", tokens, " tokens, expected seq_len + 1 = ", s.seq_len + 1);
  }
  for (const Span& span : s.queue) check_span(span, "packing queue");
}

std::string describe(const SavedState& s) {
  std::ostringstream out;
  out << "data loader state v" << kStateVersion << ": rank " << s.rank << " of " << s.world_size
      << ", seq_len " << s.seq_len << ", seed " << s.seed << ", logical_shards " << s.logical_shards
      << ", shuffle_window " << s.shuffle_window << ", block_bytes " << s.block_bytes << ", encoder "
      << std::hex << s.encoder_fingerprint << std::dec << ", bos " << s.bos << ", eos " << s.eos
      << ", rows emitted " << s.window_counter << "\n";
  for (const SavedDataset& d : s.datasets) {
    std::uint32_t min_epoch = UINT32_MAX, max_epoch = 0;
    for (const ShardCursor& c : d.cursors) {
      min_epoch = std::min(min_epoch, c.epoch);
      max_epoch = std::max(max_epoch, c.epoch);
    }
    out << "dataset '" << d.name << "': weight " << d.weight << ", " << d.file_count << " files, " << d.total_bytes
        << " bytes, " << d.cursors.size() << " shards at epochs " << min_epoch << ".." << max_epoch << ", "
        << d.tokens_since_weights << " tokens since the weights changed, " << d.records_read << " records read ("
        << d.bad_records << " bad)\n";
  }
  std::size_t spans = 0;
  for (const auto& row : s.window) spans += row.size();
  out << "shuffle window: " << s.window.size() << " rows (" << spans
      << " spans); queue: " << s.queue.size() << " spans\n";
  return out.str();
}

std::string describe_state(const std::string& blob) { return describe(decode_state(blob)); }

}  // namespace llmtrain::data
