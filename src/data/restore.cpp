// Resuming and rescaling: the states saved by W ranks continue on W' ranks, for any W and W'.
//
// Logical shard cursors follow their shards to the new owners. What was drawn but not yet consumed (the
// shuffle window's rows and the packing queue, saved as document spans) either comes back exactly (same
// world size, seq_len and tokenizer: the continuation is bitwise identical) or is flattened into one list of
// spans, in saved-rank order, and dealt round-robin to the new ranks, which pack it before any new document.
// Either way every token still owed is delivered once. Mixing counters carry over while the weights are the
// same (summed and split over the new ranks on a rescale) and restart from zero when they change.
#include <algorithm>
#include <sstream>

#include "llmtrain/core/error.hpp"
#include "loader_impl.hpp"

namespace llmtrain::data {

void Loader::Impl::check_drift(const std::vector<SavedState>& saved, const std::vector<int>& dataset_map,
                               std::vector<bool>& drifted) const {
  const std::uint64_t shards = static_cast<std::uint64_t>(opt_.logical_shards);
  for (std::size_t k = 0; k < dataset_map.size(); ++k) {
    if (dataset_map[k] < 0) continue;
    const DatasetFiles& now = files_[static_cast<std::size_t>(dataset_map[k])];
    const SavedDataset& then = saved[0].datasets[k];
    std::int64_t changed_shard = -1;
    for (const SavedState& s : saved) {
      const SavedDataset& sd = s.datasets[k];
      for (std::size_t i = 0; i < sd.cursors.size() && changed_shard < 0; ++i)
        if (shard_fingerprint(now, shards, sd.cursors[i].shard) != sd.fingerprints[i])
          changed_shard = sd.cursors[i].shard;
    }
    if (changed_shard < 0 && then.file_count == now.files.size() && then.total_bytes == now.total_bytes) continue;
    drifted[k] = true;
    if (opt_.allow_corpus_change) continue;
    std::ostringstream msg;
    msg << "dataset '" << then.name << "' changed since the loader state was saved: " << then.file_count
        << " files / " << then.total_bytes << " bytes then, " << now.files.size() << " files / " << now.total_bytes
        << " bytes now";
    if (changed_shard >= 0) {
      ByteRange r = shard_range(now, shards, static_cast<std::uint64_t>(changed_shard));
      msg << "; logical shard " << changed_shard << " (splittable bytes [" << r.begin << ", " << r.end
          << ")) differs; its files now:";
      for (std::uint32_t i : shard_files(now, shards, static_cast<std::uint64_t>(changed_shard))) {
        const CorpusFile& f = now.files[i];
        msg << " " << f.path << " (" << f.size << " bytes, mtime " << f.mtime_ns << " ns)";
      }
    }
    msg << ". Set data.allow_corpus_change = true to continue (the dataset then starts its next epoch on the new files)";
    LLMTRAIN_FAIL(msg.str());
  }
}

// A pending piece belongs to an epoch that some saved cursor of its dataset has entered: a later epoch is an
// impossible state (forged, or written by a bug), and delivering it would break exactly-once.
void Loader::Impl::check_pending_epochs(const std::vector<SavedState>& saved) const {
  const std::size_t datasets = saved[0].datasets.size();
  std::vector<std::uint32_t> max_epoch(datasets, 0);
  for (const SavedState& s : saved)
    for (std::size_t k = 0; k < datasets; ++k)
      for (const ShardCursor& c : s.datasets[k].cursors) max_epoch[k] = std::max(max_epoch[k], c.epoch);
  auto check = [&](const Span& span, int rank) {
    LLMTRAIN_CHECK(span.doc.epoch <= max_epoch[span.doc.dataset], "data loader state of rank ", rank,
                   ": a pending piece of dataset '", saved[0].datasets[span.doc.dataset].name, "' is from epoch ",
                   span.doc.epoch, ", which no shard cursor has reached (at most ", max_epoch[span.doc.dataset],
                   "): the state is damaged or forged");
  };
  for (const SavedState& s : saved) {
    for (const auto& row : s.window)
      for (const Span& span : row) check(span, static_cast<int>(s.rank));
    for (const Span& span : s.queue) check(span, static_cast<int>(s.rank));
  }
}

// Adding and removing datasets at a resume is allowed, so a renamed dataset would look like a removed one plus a
// new one: its position lost, its epoch restarted, silently. A saved dataset that is gone and a new one with
// exactly its files (count, bytes, and every saved shard's fingerprint of paths, sizes and mtimes) is a rename.
void Loader::Impl::check_renamed(const std::vector<SavedState>& saved, const std::vector<int>& dataset_map) const {
  if (opt_.allow_corpus_change) return;
  const std::uint64_t shards = static_cast<std::uint64_t>(opt_.logical_shards);
  for (std::size_t d = 0; d < opt_.datasets.size(); ++d) {
    if (std::find(dataset_map.begin(), dataset_map.end(), static_cast<int>(d)) != dataset_map.end()) continue;
    const DatasetFiles& now = files_[d];
    for (std::size_t k = 0; k < dataset_map.size(); ++k) {
      const SavedDataset& then = saved[0].datasets[k];
      if (dataset_map[k] >= 0 || then.file_count != now.files.size() || then.total_bytes != now.total_bytes) continue;
      bool same = true;
      for (const SavedState& s : saved)
        for (std::size_t i = 0; i < s.datasets[k].cursors.size() && same; ++i)
          same = shard_fingerprint(now, shards, s.datasets[k].cursors[i].shard) == s.datasets[k].fingerprints[i];
      LLMTRAIN_CHECK(!same, "dataset '", opt_.datasets[d].name, "' has the files of the saved dataset '", then.name,
                     "' (", then.file_count, " files, ", then.total_bytes, " bytes), which is no longer configured: "
                     "renamed? A dataset's name keys its shuffle order and its place in the state, so under a new "
                     "name it would restart its epoch and forget what it delivered. Rename it back to '", then.name,
                     "', or set data.allow_corpus_change = true to start '", opt_.datasets[d].name, "' afresh");
    }
  }
}

Span Loader::Impl::remap(Span span, const std::vector<int>& dataset_map) const {
  span.doc.dataset = static_cast<std::uint32_t>(dataset_map[span.doc.dataset]);
  LLMTRAIN_CHECK(span.doc.file < files_[span.doc.dataset].files.size(), "data loader state: a document of dataset '",
                 opt_.datasets[span.doc.dataset].name, "' refers to file #", span.doc.file, " of ",
                 files_[span.doc.dataset].files.size());
  return span;
}

void Loader::Impl::restore_exact(const SavedState& own, const std::vector<int>& dataset_map) {
  auto remap = [&](const Span& span) { return this->remap(span, dataset_map); };
  // Rows come back as spans only; next_row() re-encodes a row's documents when it is released, so a restore
  // costs no tokenization.
  for (const std::vector<Span>& saved_row : own.window) {
    PackedRow row;
    for (const Span& span : saved_row) row.spans.push_back(remap(span));
    window_.push_back(std::move(row));
  }
  for (const Span& span : own.queue) packer_.queue.push_back(remap(span));
}

void Loader::Impl::restore_spans(const std::vector<SavedState>& saved, const std::vector<int>& dataset_map,
                                 const std::vector<bool>& drop) {
  std::vector<Span> pieces;
  auto add = [&](const Span& saved_span) {
    if (drop[saved_span.doc.dataset] || saved_span.begin == saved_span.end) {
      dropped_spans_ += drop[saved_span.doc.dataset] ? 1 : 0;
      return;
    }
    Span span = remap(saved_span, dataset_map);
    if (!pieces.empty() && pieces.back().doc == span.doc && pieces.back().end == span.begin) {
      pieces.back().end = span.end;  // two pieces of one document that were cut by a row boundary
    } else {
      pieces.push_back(span);
    }
  };
  for (const SavedState& s : saved) {
    for (const auto& row : s.window)
      for (const Span& span : row) add(span);
    for (const Span& span : s.queue) add(span);
  }
  for (std::size_t i = static_cast<std::size_t>(rank_); i < pieces.size(); i += static_cast<std::size_t>(world_size_))
    packer_.queue.push_back(pieces[i]);
}

void Loader::Impl::restore(const std::vector<std::string>& blobs) {
  LLMTRAIN_CHECK(!started_, "data loader: restore() must come before the first next()");
  LLMTRAIN_CHECK(!blobs.empty(), "data loader: no saved state to restore");
  std::vector<SavedState> saved;
  for (std::size_t i = 0; i < blobs.size(); ++i) {
    try {
      saved.push_back(decode_state(blobs[i]));
    } catch (const Error& e) {
      LLMTRAIN_FAIL("data loader state #", i, ": ", e.what());
    }
  }
  std::sort(saved.begin(), saved.end(), [](const SavedState& a, const SavedState& b) { return a.rank < b.rank; });
  const SavedState& head = saved[0];
  for (std::size_t i = 0; i < saved.size(); ++i) {
    const SavedState& s = saved[i];
    LLMTRAIN_CHECK(s.world_size == saved.size() && s.rank == i, "data loader states: expected the ",
                   s.world_size, " states of ranks 0..", s.world_size - 1, " of one run, got ", saved.size(),
                   " states (rank ", s.rank, " of ", s.world_size, ")");
    LLMTRAIN_CHECK(s.seed == head.seed && s.logical_shards == head.logical_shards &&
                       s.block_bytes == head.block_bytes && s.datasets.size() == head.datasets.size() &&
                       s.seq_len == head.seq_len && s.shuffle_window == head.shuffle_window &&
                       s.encoder_fingerprint == head.encoder_fingerprint && s.bos == head.bos && s.eos == head.eos,
                   "data loader states: ranks 0 and ", i, " come from different runs");
    for (std::size_t k = 0; k < s.datasets.size(); ++k) {
      const SavedDataset &a = head.datasets[k], &b = s.datasets[k];
      LLMTRAIN_CHECK(a.name == b.name && a.weight == b.weight && a.file_count == b.file_count &&
                         a.total_bytes == b.total_bytes,
                     "data loader states: ranks 0 and ", i, " describe dataset #", k, " differently ('", a.name,
                     "' and '", b.name, "')");
    }
  }
  check_pending_epochs(saved);
  LLMTRAIN_CHECK(head.seed == opt_.seed, "data.seed is ", opt_.seed, " but the saved run used ", head.seed,
                 ": the shuffle order of a run is keyed by its seed and cannot change mid-run");
  LLMTRAIN_CHECK(head.logical_shards == static_cast<std::uint64_t>(opt_.logical_shards), "data.logical_shards is ",
                 opt_.logical_shards, " but the saved run used ", head.logical_shards, ": it is fixed for a run");
  LLMTRAIN_CHECK(head.block_bytes == static_cast<std::uint64_t>(opt_.block_bytes), "data.block_bytes is ",
                 opt_.block_bytes, " but the saved run used ", head.block_bytes, ": it is fixed for a run");
  const std::int64_t bos = opt_.bos_id ? *opt_.bos_id : -1, eos = opt_.eos_id ? *opt_.eos_id : -1;
  const bool tokenizer_changed =
      head.encoder_fingerprint != encoder_->fingerprint() || head.bos != bos || head.eos != eos;
  LLMTRAIN_CHECK(!tokenizer_changed || opt_.allow_corpus_change, "the tokenizer changed since the loader state was saved "
                 "(fingerprint ", std::hex, head.encoder_fingerprint, " -> ", encoder_->fingerprint(), std::dec,
                 ", bos ", head.bos, " -> ", bos, ", eos ", head.eos, " -> ", eos,
                 "). Set data.allow_corpus_change = true to continue (partly delivered documents are then dropped)");

  std::vector<int> dataset_map(head.datasets.size(), -1);
  for (std::size_t k = 0; k < head.datasets.size(); ++k)
    for (std::size_t d = 0; d < opt_.datasets.size(); ++d)
      if (opt_.datasets[d].name == head.datasets[k].name) dataset_map[k] = static_cast<int>(d);
  check_renamed(saved, dataset_map);
  std::vector<bool> drifted(head.datasets.size(), false);
  check_drift(saved, dataset_map, drifted);

  bool same_weights = head.datasets.size() == opt_.datasets.size();
  for (std::size_t k = 0; k < head.datasets.size(); ++k)
    same_weights = same_weights && dataset_map[k] >= 0 &&
                   opt_.datasets[static_cast<std::size_t>(dataset_map[k])].weight == head.datasets[k].weight;
  const bool same_world = head.world_size == static_cast<std::uint32_t>(world_size_);
  const std::uint64_t w = static_cast<std::uint64_t>(world_size_), r = static_cast<std::uint64_t>(rank_);
  const std::uint64_t shards = static_cast<std::uint64_t>(opt_.logical_shards);
  const std::uint64_t block_bytes = static_cast<std::uint64_t>(opt_.block_bytes);
  auto share = [&](std::uint64_t total) { return total / w + (r < total % w ? 1 : 0); };

  std::vector<bool> drop(head.datasets.size(), false);
  for (std::size_t k = 0; k < head.datasets.size(); ++k) {
    drop[k] = dataset_map[k] < 0 || drifted[k] || tokenizer_changed;
    if (dataset_map[k] < 0) continue;
    const std::size_t d = static_cast<std::size_t>(dataset_map[k]);
    ShardStream& stream = *streams_[d];
    std::uint32_t max_epoch = 0;
    std::uint64_t tokens = 0, draws = 0, read = 0, bad = 0;
    for (const SavedState& s : saved) {
      const SavedDataset& sd = s.datasets[k];
      for (const ShardCursor& c : sd.cursors) {
        max_epoch = std::max(max_epoch, c.epoch);
        if (drifted[k] || !rank_owns_shard(c.shard, rank_, world_size_)) continue;
        const std::size_t blocks = shard_blocks(files_[d], shards, c.shard, block_bytes).size();
        LLMTRAIN_CHECK(c.block_pos <= blocks, "data loader state: dataset '", sd.name, "', logical shard ", c.shard,
                       ": block position ", c.block_pos, " beyond its ", blocks, " blocks (the state is damaged or forged)");
        stream.set_cursor(c);
      }
      tokens += sd.tokens_since_weights;
      draws += sd.draw_counter;
      read += sd.records_read;
      bad += sd.bad_records;
    }
    if (drifted[k]) {
      for (ShardCursor c : stream.cursors()) stream.set_cursor(ShardCursor{c.shard, max_epoch + 1, 0, 0});
    }
    const SavedDataset& own = saved[r < saved.size() ? r : 0].datasets[k];
    tokens_since_weights_[d] = !same_weights ? 0 : same_world ? own.tokens_since_weights : share(tokens);
    stream.draw_counter = same_world ? own.draw_counter : 0;
    stream.records_read = same_world ? own.records_read : share(read);
    stream.bad_records = same_world ? own.bad_records : share(bad);
  }
  const bool exact = same_world && head.seq_len == static_cast<std::uint64_t>(opt_.seq_len) &&
                     std::none_of(drop.begin(), drop.end(), [](bool b) { return b; });
  if (exact) {
    window_counter_ = saved[r].window_counter;
    restore_exact(saved[r], dataset_map);
  } else {
    restore_spans(saved, dataset_map, drop);
  }
}

}  // namespace llmtrain::data
