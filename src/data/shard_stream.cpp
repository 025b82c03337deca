// Shuffled reading of a rank's logical shards (see shard_stream.hpp).
#include "shard_stream.hpp"

#include <algorithm>
#include <utility>

#include "llmtrain/core/error.hpp"
#include "llmtrain/core/log.hpp"
#include "stop_check.hpp"

namespace llmtrain::data {

ShardStream::ShardStream(const DatasetFiles& files, std::uint32_t dataset_index, std::uint64_t seed,
                         std::uint64_t logical_shards, std::uint64_t block_bytes, int rank, int world_size)
    : files_(files),
      index_(dataset_index),
      seed_(seed),
      name_hash_(hash_bytes(files.name.data(), files.name.size())),
      logical_shards_(logical_shards),
      block_bytes_(block_bytes),
      rank_(rank) {
  for (std::uint64_t s = static_cast<std::uint64_t>(rank); s < logical_shards;
       s += static_cast<std::uint64_t>(world_size)) {
    Shard shard;
    shard.cursor.shard = static_cast<std::uint32_t>(s);
    shards_.push_back(std::move(shard));
  }
}

std::uint64_t ShardStream::key(std::uint32_t epoch, std::uint32_t shard) const {
  return hash_values({seed_, name_hash_, epoch, shard});
}

std::vector<ShardCursor> ShardStream::cursors() const {
  std::vector<ShardCursor> out;
  for (const Shard& s : shards_) out.push_back(s.cursor);
  return out;
}

StreamProgress ShardStream::take_progress() {
  StreamProgress p{{}, draw_counter, records_read, bad_records};
  p.cursors.reserve(moved_.size());
  for (std::uint32_t i : moved_) {
    p.cursors.emplace_back(i, shards_[i].cursor);
    shards_[i].moved = false;
  }
  moved_.clear();
  return p;
}

void ShardStream::mark_moved(Shard& shard) {
  if (shard.moved) return;
  shard.moved = true;
  moved_.push_back(static_cast<std::uint32_t>(&shard - shards_.data()));
}

void ShardStream::set_cursor(const ShardCursor& cursor) {
  for (Shard& s : shards_) {
    if (s.cursor.shard != cursor.shard) continue;
    s.cursor = cursor;
    s.block_open = false;
    s.done_known = false;
    s.weight = -1;
    mark_moved(s);
    tree_valid_ = false;
    return;
  }
  LLMTRAIN_FAIL("dataset '", files_.name, "': rank ", rank_, " does not own logical shard ", cursor.shard);
}

std::uint32_t ShardStream::min_epoch() const {
  std::uint32_t e = UINT32_MAX;
  for (const Shard& s : shards_) e = std::min(e, s.cursor.epoch);
  return e;
}

void ShardStream::count_bad(const std::string& file, std::uint64_t offset, const std::string& why,
                            const BadRecordPolicyState& bad) {
  ++bad_records;
  last_bad = cat(file, ": byte ", offset, ": ", why);
  LLMTRAIN_CHECK(bad.policy == BadRecordPolicy::skip, file, ": byte ", offset, ": bad record (", why,
                 "); set on_bad_record = \"skip\" to skip such records");
  if (bad.by_file) ++(*bad.by_file)[file];
  LLMTRAIN_CHECK(records_read < 100 || bad_records <= bad.max_fraction * static_cast<double>(records_read),
                 "dataset '", files_.name, "': ", bad_records, " bad records out of ", records_read,
                 " read exceeds max_bad_fraction = ", bad.max_fraction, " (last: ", file, ": byte ", offset, ": ",
                 why, ")");
}

// A file whose size changed since the schedule was planned: "fail" stops here with the sizes; "skip" warns
// once per file and skips each of its blocks opened from now on, each counted as a bad record (so
// max_bad_fraction still bounds what is lost).
void ShardStream::size_changed(const CorpusFile& file, const std::string& what, const BadRecordPolicyState& bad) {
  LLMTRAIN_CHECK(bad.policy == BadRecordPolicy::skip, file.path, ": ", what, "; ", size_change_consequence(),
                 ". The run stops (on_bad_record = \"fail\")");
  if (!warned_size_change_.insert(file.path).second) return;
  log_warn(file.path, ": ", what, "; ", size_change_consequence(), ". Until then its blocks are skipped, each counted "
           "as a bad record (on_bad_record = \"skip\", bounded by max_bad_fraction)");
}

bool ShardStream::open_current(Shard& shard, const BadRecordPolicyState& bad) {
  ShardCursor& c = shard.cursor;
  if (!shard.blocks_listed) {
    shard.blocks = shard_blocks(files_, logical_shards_, c.shard, block_bytes_);
    shard.blocks_listed = true;
    for (const ShardBlock& b : shard.blocks) shard.total_bytes += b.end - b.begin;
  }
  KeyedPermutation block_order(shard.blocks.size(), key(c.epoch, c.shard));
  if (!shard.done_known) {
    shard.done_bytes = 0;
    for (std::uint64_t i = 0; i < c.block_pos && i < shard.blocks.size(); ++i) {
      const ShardBlock& b = shard.blocks[block_order(i)];
      shard.done_bytes += b.end - b.begin;
    }
    shard.done_known = true;
  }
  while (c.block_pos < shard.blocks.size()) {
    if (!shard.block_open) {
      shard.block_index = block_order(c.block_pos);
      const ShardBlock& range = shard.blocks[shard.block_index];
      shard.block = read_block(files_.files[range.file], range, std::move(shard.block));
      shard.block_open = true;
      // doc_pos == records: the block's last document was drawn; beyond: a cursor that never existed.
      LLMTRAIN_CHECK(c.doc_pos <= shard.block.records.size(), "dataset '", files_.name, "', logical shard ", c.shard,
                     ": a saved cursor is at document ", c.doc_pos, " of a block of ", files_.files[range.file].path,
                     " that holds ", shard.block.records.size(), " (the state is damaged or forged, or the file changed)");
      if (shard.block.size_changed) size_changed(files_.files[range.file], shard.block.error, bad);
      if (!shard.block.error.empty() && c.doc_pos == 0) {
        ++records_read;
        count_bad(files_.files[range.file].path, range.begin, shard.block.error, bad);
      }
    }
    if (c.doc_pos < shard.block.records.size()) return true;
    const ShardBlock& range = shard.blocks[shard.block_index];
    shard.done_bytes += range.end - range.begin;
    mark_moved(shard);
    ++c.block_pos;
    c.doc_pos = 0;
    shard.block_open = false;
    shard.block.reset();
  }
  return false;
}

double ShardStream::weight(Shard& shard, const BadRecordPolicyState& bad) {
  if (shard.weight >= 0) return shard.weight;
  if (!open_current(shard, bad)) return shard.weight = 0;
  const ShardBlock& range = shard.blocks[shard.block_index];
  const double docs = static_cast<double>(shard.block.records.size());
  const double size = static_cast<double>(range.end - range.begin);
  const double later = static_cast<double>(shard.total_bytes - shard.done_bytes) - size;
  return shard.weight = docs - static_cast<double>(shard.cursor.doc_pos) + docs / size * later;
}

void ShardStream::next_epoch(Shard& shard) {
  mark_moved(shard);
  shard.cursor = ShardCursor{shard.cursor.shard, shard.cursor.epoch + 1, 0, 0};
  shard.done_bytes = 0;
  shard.done_known = true;
  shard.weight = -1;
  shard.block_open = false;
  shard.block.reset();
}

bool ShardStream::advance(Shard& shard, TextExtractor& extractor, const BadRecordPolicyState& bad, Drawn& out) {
  ShardCursor& c = shard.cursor;
  shard.weight = -1;
  mark_moved(shard);
  while (open_current(shard, bad)) {
    const ShardBlock& range = shard.blocks[shard.block_index];
    const CorpusFile& file = files_.files[range.file];
    const LoadedBlock& block = shard.block;
    KeyedPermutation doc_order(block.records.size(), hash_values({key(c.epoch, c.shard), shard.block_index}));
    const LoadedBlock::Record& r = block.records[doc_order(c.doc_pos++)];
    const std::uint64_t offset = r.offset;
    std::string why;
    ++records_read;
    std::string_view raw(block.data.data() + r.begin, r.end - r.begin);
    if (extractor.extract(file.format, raw, files_.field, out.text, why)) {
      out.ref = DocRef{index_, range.file, offset, c.epoch};
      out.format = file.format;
      return true;
    }
    count_bad(file.path, offset, why, bad);
  }
  return false;
}

void ShardStream::build_tree(const BadRecordPolicyState& bad) {
  epoch_ = min_epoch();
  active_ = 0;
  tree_.reset(shards_.size());
  for (std::size_t i = 0; i < shards_.size(); ++i) {
    if (shards_[i].cursor.epoch != epoch_) continue;
    tree_.set(i, weight(shards_[i], bad));
    ++active_;
  }
  tree_valid_ = true;
  stale_ = SIZE_MAX;
}

std::optional<ShardStream::Drawn> ShardStream::next(TextExtractor& extractor, const BadRecordPolicyState& bad) {
  // Bound on epoch changes without a document: beyond it every owned shard went through a whole epoch empty.
  std::size_t fruitless = 0;
  while (fruitless <= 2 * shards_.size() + 2) {
    if (fruitless > 0) check_not_stopped("looking for a readable document of dataset '" + files_.name + "'");
    if (!tree_valid_) {
      build_tree(bad);
    } else if (stale_ != SIZE_MAX) {  // the shard drawn last is still at epoch_ (it gave a document)
      tree_.set(stale_, weight(shards_[stale_], bad));
      stale_ = SIZE_MAX;
    }
    if (tree_.total() <= 0) {  // every shard of the lowest epoch is finished
      for (Shard& shard : shards_)
        if (shard.cursor.epoch == epoch_) next_epoch(shard);
      tree_valid_ = false;
      ++fruitless;
      continue;
    }
    std::uint64_t h = hash_values({seed_, name_hash_, static_cast<std::uint64_t>(rank_), draw_counter});
    const std::size_t pick = tree_.pick(static_cast<double>(h >> 11) * 0x1.0p-53 * tree_.total());
    Shard& shard = shards_[pick];
    Drawn drawn;
    if (advance(shard, extractor, bad, drawn)) {
      ++draw_counter;
      stale_ = pick;
      return drawn;
    }
    next_epoch(shard);  // out of the tree: the others of epoch_ go on, or the next lowest epoch is built
    tree_.set(pick, 0);
    if (--active_ == 0) tree_valid_ = false;
    ++fruitless;
  }
  return std::nullopt;
}

}  // namespace llmtrain::data
