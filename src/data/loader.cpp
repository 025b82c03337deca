// The forward path of the loader: mixing picks a dataset, its shard stream gives the next document, the
// encoder turns it into framed tokens, the packer fills rows, the shuffle window releases them.
#include <algorithm>
#include <set>
#include <thread>

#include "llmtrain/core/counted.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/core/log.hpp"
#include "adaptive_prefetch.hpp"
#include "loader_impl.hpp"
#include "permutation.hpp"
#include "prefetcher.hpp"
#include "stop_check.hpp"

namespace llmtrain::data {

Loader::Impl::Impl(LoaderOptions options, std::shared_ptr<const DocumentEncoder> encoder, int rank, int world_size)
    : opt_(std::move(options)),
      encoder_(std::move(encoder)),
      rank_(rank),
      world_size_(world_size),
      packer_(opt_.seq_len + 1, opt_.bos_id, opt_.eos_id, opt_.metadata_only) {
  LLMTRAIN_CHECK(encoder_ != nullptr, "data loader: no encoder");
  LLMTRAIN_CHECK(opt_.seq_len >= 1, "data.seq_len must be >= 1, got ", opt_.seq_len);
  LLMTRAIN_CHECK(opt_.logical_shards >= 1 && opt_.logical_shards <= INT32_MAX,
                 "data.logical_shards must be in [1, 2^31), got ", opt_.logical_shards);
  LLMTRAIN_CHECK(world_size >= 1 && world_size <= opt_.logical_shards, "world size ", world_size,
                 " must be in [1, data.logical_shards = ", opt_.logical_shards, "]");
  LLMTRAIN_CHECK(rank >= 0 && rank < world_size, "rank ", rank, " out of range for world size ", world_size);
  LLMTRAIN_CHECK(opt_.shuffle_window >= 1, "data.shuffle_window must be >= 1, got ", opt_.shuffle_window);
  LLMTRAIN_CHECK(opt_.threads >= 1 && opt_.threads <= 1024, "data.threads must be in [1, 1024] here, got ",
                 opt_.threads);
  LLMTRAIN_CHECK(!opt_.metadata_only || opt_.threads == 1, "metadata-only packing counts tokens in the loader's "
                 "thread: data.threads must be 1, got ", opt_.threads);
  LLMTRAIN_CHECK(opt_.batch_rows >= 1, "batch rows must be >= 1, got ", opt_.batch_rows);
  LLMTRAIN_CHECK(opt_.block_bytes >= 1, "data.block_bytes must be >= 1, got ", opt_.block_bytes);
  LLMTRAIN_CHECK(opt_.max_bad_fraction >= 0 && opt_.max_bad_fraction <= 1,
                 "data.max_bad_fraction must be in [0, 1], got ", opt_.max_bad_fraction);
  LLMTRAIN_CHECK(!opt_.datasets.empty(), "data: no dataset configured");
  std::set<std::string> names;
  double total_weight = 0;
  for (const DatasetSpec& d : opt_.datasets) {
    LLMTRAIN_CHECK(names.insert(d.name).second, "data.datasets: duplicate name '", d.name, "'");
    LLMTRAIN_CHECK(d.weight >= 0, "dataset '", d.name, "': weight must be >= 0, got ", d.weight);
    total_weight += d.weight;
  }
  LLMTRAIN_CHECK(total_weight > 0, "data.datasets: the weights sum to 0");
  files_.reserve(opt_.datasets.size());
  for (std::size_t i = 0; i < opt_.datasets.size(); ++i) {
    files_.push_back(list_dataset(opt_.datasets[i]));
    // Raw text has no length before it is tokenized; refusing it keeps metadata-only exactly the normal run.
    if (opt_.metadata_only)
      for (const CorpusFile& file : files_.back().files)
        LLMTRAIN_CHECK(is_token_format(file.format), "dataset '", opt_.datasets[i].name,
                       "': metadata-only needs pre-tokenized datasets; run llmtrain-data pretokenize (", file.path,
                       " is raw text)");
    for (const std::string& path : files_.back().empty_files) {
      LLMTRAIN_CHECK(opt_.on_bad_record == BadRecordPolicy::skip, path,
                     ": empty file; set on_bad_record = \"skip\" to skip it");
      if (rank_ == 0) ++bad_by_file_[path];
    }
    streams_.push_back(std::make_unique<ShardStream>(files_.back(), static_cast<std::uint32_t>(i), opt_.seed,
                                                     opt_.logical_shards, opt_.block_bytes, rank, world_size));
  }
  tokens_since_weights_.assign(opt_.datasets.size(), 0);
  empty_.assign(opt_.datasets.size(), false);
  tokenless_docs_.assign(opt_.datasets.size(), 0);
  tokenless_since_.assign(opt_.datasets.size(), std::nullopt);
  no_tokens_.assign(opt_.datasets.size(), false);
}

void Loader::Impl::frame(FileFormat format, std::string_view text, std::vector<TokenId>& framed) const {
  if (opt_.bos_id) framed.push_back(*opt_.bos_id);
  document_tokens(format, text, *encoder_, framed);
  if (opt_.eos_id) framed.push_back(*opt_.eos_id);
}

void Loader::Impl::frame_or_count(FileFormat format, std::string_view text, FramedDocument& framed) const {
  if (opt_.metadata_only) {
    // Only token files get here (checked at construction): the record is the document's ids as int32.
    framed.length = text.size() / sizeof(TokenId) + (opt_.bos_id ? 1 : 0) + (opt_.eos_id ? 1 : 0);
    return;
  }
  frame(format, text, framed.tokens);
  framed.length = framed.tokens.size();
}

// Dynamic mixing: the dataset furthest below its target share of the tokens drawn since the weights last
// changed (absolute deficit weight / total weight * drawn - drawn from it; ties go to the first dataset).
// Datasets with no document on this rank are skipped but keep their place in the normalisation, so the
// choice does not depend on when the rank found out that they are empty (a resumed run finds out again).
// A document that frames to no token is consumed (its cursor moves, it is counted) and the pick repeats; a
// dataset whose documents gave no token over a whole epoch is skipped like an empty one. Skipping it changes
// no row: until it is found out, picking it only consumes its tokenless documents.
bool Loader::Impl::draw(DocRef& doc, FramedDocument& framed) {
  BadRecordPolicyState bad{opt_.on_bad_record, opt_.max_bad_fraction, &bad_by_file_};
  double weight_sum = 0, drawn = 0;
  for (std::size_t d = 0; d < streams_.size(); ++d) {
    weight_sum += opt_.datasets[d].weight;
    drawn += static_cast<double>(tokens_since_weights_[d]);
  }
  for (;;) {
    std::size_t best = streams_.size();
    double best_deficit = 0;
    for (std::size_t d = 0; d < streams_.size(); ++d) {
      if (empty_[d] || opt_.datasets[d].weight <= 0) continue;
      double deficit = opt_.datasets[d].weight / weight_sum * drawn - static_cast<double>(tokens_since_weights_[d]);
      if (best == streams_.size() || deficit > best_deficit) {
        best = d;
        best_deficit = deficit;
      }
    }
    if (best == streams_.size()) return false;
    if (!next_document(best, doc, framed, bad)) {
      empty_[best] = true;
      continue;
    }
    if (framed.length == 0) {
      if (tokenless(best, doc.epoch)) empty_[best] = true;
      continue;
    }
    tokenless_since_[best].reset();
    tokens_since_weights_[best] += framed.length;
    return true;
  }
}

bool Loader::Impl::tokenless(std::size_t d, std::uint32_t epoch) {
  ++tokenless_docs_[d];
  check_not_stopped("skipping documents without tokens of dataset '" + opt_.datasets[d].name + "'");
  if (!tokenless_since_[d]) tokenless_since_[d] = epoch;
  // A rank delivers a dataset's epochs in order, so reaching epoch e + 2 in a run that began in epoch e means
  // that all of epoch e + 1 gave no token.
  if (epoch < *tokenless_since_[d] + 2) return false;
  no_tokens_[d] = true;
  log_warn("data loader: dataset '", opt_.datasets[d].name, "' gave no token over a whole epoch on rank ", rank_,
           " of ", world_size_, " (", tokenless_docs_[d], " documents framed to zero tokens: empty texts and no "
           "BOS/EOS?); its weight ", opt_.datasets[d].weight, " counts as 0 on this rank");
  return true;
}

std::string Loader::Impl::no_document_reason() const {
  std::string why;
  for (std::size_t d = 0; d < streams_.size(); ++d) {
    why += cat(d ? "; " : "", "'", opt_.datasets[d].name, "': ");
    if (opt_.datasets[d].weight <= 0) why += "weight 0";
    else if (no_tokens_[d]) why += cat("no token in a whole epoch (", tokenless_docs_[d], " documents without tokens)");
    else why += no_data_reason(d);
  }
  return why;
}

// Why dataset d has no document on this rank, with the numbers and the setting to change.
std::string Loader::Impl::no_data_reason(std::size_t d) const {
  const DatasetFiles& ds = files_[d];
  const std::uint64_t shards = static_cast<std::uint64_t>(opt_.logical_shards);
  std::uint64_t owned = 0, with_blocks = 0;
  for (std::uint64_t s = static_cast<std::uint64_t>(rank_); s < shards; s += static_cast<std::uint64_t>(world_size_)) {
    ++owned;
    if (!shard_blocks(ds, shards, s, static_cast<std::uint64_t>(opt_.block_bytes)).empty()) ++with_blocks;
  }
  if (with_blocks > 0) {
    const ShardStream& stream = *streams_[d];
    return cat("only bad records in the ", counted(with_blocks, "non-empty logical shard"), " on this rank: ",
               stream.bad_records, " bad of ", counted(stream.records_read, "record"), " read, skipped "
               "(data.on_bad_record = \"skip\")", stream.last_bad.empty() ? "" : "; the last: ", stream.last_bad);
  }
  const std::size_t whole = ds.whole_files.size();
  const std::string why = cat("none of the ", counted(owned, "logical shard"), " rank ", rank_, " of ", world_size_,
                              " owns holds data: ", counted(whole, "file"), " read whole (.gz/.zst/.txt, one per "
                              "shard, so they feed at most ", counted(whole, "rank"), ") and ", ds.split_bytes,
                              " bytes of splittable files over data.logical_shards = ", shards, " (",
                              ds.split_bytes / shards, " bytes per shard; a record belongs to the shard where it starts)");
  if (ds.split_bytes == 0)
    return cat(why, ". Run on at most ", counted(whole, "rank"), ", or split the dataset into at least ",
               counted(world_size_, "file"));
  return cat(why, ". Run on fewer ranks, or give the dataset more records (a new run may also lower "
             "data.logical_shards so that each shard spans several records)");
}

// The next document of one dataset: straight from its stream with one thread, else from its lookahead,
// which is refilled so that the workers always have the following documents to tokenize.
bool Loader::Impl::next_document(std::size_t dataset, DocRef& doc, FramedDocument& framed,
                                 const BadRecordPolicyState& bad) {
  if (opt_.threads == 1) {
    auto next = streams_[dataset]->next(extractor_, bad);
    if (!next) return false;
    doc = next->ref;
    frame_or_count(next->format, next->text, framed);
    return true;
  }
  if (!pool_) {
    pool_ = std::make_unique<EncodePool>(static_cast<int>(opt_.threads),
                                         [this](FileFormat format, std::string_view text, std::vector<TokenId>& out) {
      frame(format, text, out);
    });
    const auto depth = static_cast<std::size_t>(opt_.threads * kLookaheadPerThread);
    for (auto& stream : streams_) ahead_.push_back(std::make_unique<Lookahead>(*stream, depth));
  }
  Lookahead& ahead = *ahead_[dataset];
  ahead.fill(*pool_, extractor_, bad);
  bool found = ahead.take(*pool_, doc, framed.tokens);
  framed.length = framed.tokens.size();
  ahead.fill(*pool_, extractor_, bad);
  return found;
}

StreamPosition Loader::Impl::position(std::size_t dataset) const {
  return ahead_.empty() ? streams_[dataset]->position() : ahead_[dataset]->position();
}

void Loader::Impl::load(const DocRef& doc, FramedDocument& framed) {
  const CorpusFile& file = files_[doc.dataset].files[doc.file];
  std::string raw = read_record(file, doc.byte_offset);
  std::string_view text;
  std::string why;
  LLMTRAIN_CHECK(extractor_.extract(file.format, raw, files_[doc.dataset].field, text, why), file.path, ": byte ",
                 doc.byte_offset, ": a record of the saved state became unreadable (", why, ")");
  frame_or_count(file.format, text, framed);
}

PackedRow Loader::Impl::next_row() {
  started_ = true;
  DrawDocument draw = [this](DocRef& doc, FramedDocument& framed) {
    LLMTRAIN_CHECK(this->draw(doc, framed), "data loader: rank ", rank_, " of ", world_size_,
                   " has no document that yields tokens in any dataset (", no_document_reason(), ")");
    return true;
  };
  LoadDocument load = [this](const DocRef& doc, FramedDocument& framed) { this->load(doc, framed); };
  // The window grows while it is drawn from: before row c (window_counter_) is emitted it holds
  // min(shuffle_window, 2 (c + 1)) rows, so the first batch waits for about 2 x its rows instead of the whole
  // window, the window is full after shuffle_window / 2 rows, and the order stays a function of seed and state.
  const std::uint64_t target = std::min(static_cast<std::uint64_t>(opt_.shuffle_window), 2 * (window_counter_ + 1));
  while (window_.size() < target) {
    window_.push_back(packer_.pack(draw, load));
    if (progress_) progress_->entered.push_back(window_.back().spans);
  }
  std::uint64_t pick = hash_values({opt_.seed, 0x77696e646f77ULL, static_cast<std::uint64_t>(rank_), window_counter_++});
  std::size_t j = pick % window_.size();
  if (progress_)
    progress_->picks.push_back({static_cast<std::uint32_t>(progress_->entered.size()), static_cast<std::uint32_t>(j)});
  PackedRow row = std::move(window_[j]);
  window_[j] = std::move(window_.back());
  window_.pop_back();
  if (row.length == 0) row = packer_.rebuild(row.spans, load);  // a row restored from a saved state
  return row;
}

void Loader::Impl::describe_row(const PackedRow& row, RowProvenance& p) const {
  p.special = row.special;
  p.spans.resize(row.spans.size());
  for (std::size_t i = 0; i < row.spans.size(); ++i) {
    const DocRef& doc = row.spans[i].doc;
    SpanInfo& s = p.spans[i];
    s.dataset = opt_.datasets[doc.dataset].name;
    s.file = files_[doc.dataset].files[doc.file].path;
    s.byte_offset = doc.byte_offset;
    s.epoch = doc.epoch;
    s.token_begin = row.text[i].first;
    s.token_end = row.text[i].second;
  }
}

void Loader::Impl::assemble(const std::vector<PackedRow>& rows, Batch& batch,
                            std::vector<RowProvenance>& provenance) const {
  batch.rows = static_cast<std::int64_t>(rows.size());
  batch.seq_len = opt_.seq_len;
  batch.tokens.clear();
  batch.doc_index.clear();
  if (!opt_.metadata_only) {  // metadata-only rows have no tokens: the batch stays empty
    batch.tokens.reserve(static_cast<std::size_t>(batch.rows * batch.row_width()));
    batch.doc_index.reserve(batch.tokens.capacity());
  }
  provenance.resize(rows.size());
  for (std::size_t r = 0; r < rows.size(); ++r) {
    batch.tokens.insert(batch.tokens.end(), rows[r].tokens.begin(), rows[r].tokens.end());
    batch.doc_index.insert(batch.doc_index.end(), rows[r].doc_index.begin(), rows[r].doc_index.end());
    describe_row(rows[r], provenance[r]);
  }
}

SavedState Loader::Impl::save() const {
  SavedState s;
  s.rank = static_cast<std::uint32_t>(rank_);
  s.world_size = static_cast<std::uint32_t>(world_size_);
  s.seq_len = static_cast<std::uint64_t>(opt_.seq_len);
  s.seed = opt_.seed;
  s.logical_shards = static_cast<std::uint64_t>(opt_.logical_shards);
  s.shuffle_window = static_cast<std::uint64_t>(opt_.shuffle_window);
  s.block_bytes = static_cast<std::uint64_t>(opt_.block_bytes);
  s.encoder_fingerprint = encoder_->fingerprint();
  s.bos = opt_.bos_id ? *opt_.bos_id : -1;
  s.eos = opt_.eos_id ? *opt_.eos_id : -1;
  s.window_counter = window_counter_;
  for (std::size_t d = 0; d < streams_.size(); ++d) {
    const StreamPosition stream = position(d);
    SavedDataset sd;
    sd.name = opt_.datasets[d].name;
    sd.weight = opt_.datasets[d].weight;
    sd.file_count = files_[d].files.size();
    sd.total_bytes = files_[d].total_bytes;
    sd.tokens_since_weights = tokens_since_weights_[d];
    sd.draw_counter = stream.draw_counter;
    sd.records_read = stream.records_read;
    sd.bad_records = stream.bad_records;
    sd.cursors = stream.cursors;
    for (const ShardCursor& c : sd.cursors)
      sd.fingerprints.push_back(shard_fingerprint(files_[d], s.logical_shards, c.shard));
    s.datasets.push_back(std::move(sd));
  }
  for (const PackedRow& row : window_) s.window.push_back(row.spans);
  s.queue.assign(packer_.queue.begin(), packer_.queue.end());
  return s;
}

Tallies Loader::Impl::tallies() const { return {empty_, tokenless_docs_, no_tokens_, dropped_spans_}; }

LoaderStats Loader::Impl::stats() const { return stats_of(save(), tallies(), bad_by_file_); }

void Loader::Impl::record_progress() {
  progress_.emplace();
  for (auto& stream : streams_) stream->take_progress();  // the consumer's copy of the state starts here
}

void Loader::Impl::stop_recording() { progress_.reset(); }

StreamProgress Loader::Impl::stream_progress(std::size_t dataset) {
  if (ahead_.empty()) return streams_[dataset]->take_progress();
  // Several threads: the position as of the documents taken is the lookahead's copy, all cursors of it.
  StreamPosition at = ahead_[dataset]->position();
  StreamProgress p{{}, at.draw_counter, at.records_read, at.bad_records};
  for (std::size_t i = 0; i < at.cursors.size(); ++i)
    p.cursors.emplace_back(static_cast<std::uint32_t>(i), at.cursors[i]);
  return p;
}

Progress Loader::Impl::take_progress() {
  Progress p = std::move(*progress_);
  progress_.emplace();
  p.window_counter = window_counter_;
  std::uint64_t bad = 0;
  for (std::size_t d = 0; d < streams_.size(); ++d) {
    p.streams.push_back(stream_progress(d));
    bad += streams_[d]->bad_records;  // counted with bad_by_file_, including documents read ahead
  }
  p.tokens_since_weights = tokens_since_weights_;
  p.queue.assign(packer_.queue.begin(), packer_.queue.end());
  p.tallies = tallies();
  if (bad != bad_reported_) {  // the map (one entry per file with bad records) is copied only when it grew
    p.bad_by_file = bad_by_file_;
    bad_reported_ = bad;
  }
  return p;
}

std::uint64_t LoaderStats::skipped_records() const {
  std::uint64_t n = 0;
  for (const auto& [file, count] : bad_records_by_file) n += count;
  return n;
}

Loader::Loader(LoaderOptions options, std::shared_ptr<const DocumentEncoder> encoder, int rank, int world_size)
    : chooser_(options.prefetch_chooser ? std::move(options.prefetch_chooser) : PrefetchChooser(AdaptivePrefetch())) {
  impl_ = std::make_unique<Impl>(std::move(options), std::move(encoder), rank, world_size);
}

Loader::~Loader() = default;  // the prefetcher (declared after impl_) stops and joins first

// With prefetching, the chooser decides after each batch who makes the next ones. Leaving the thread is not
// immediate: the producer finishes its batch, and its ring is handed out before the caller's thread makes
// any, so the batches come in the same order and the state stays the consumed state whoever made them.
void Loader::next_into(Batch& batch) {
  if (failed_) std::rethrow_exception(failed_);
  try {
    next_batch(batch);
  } catch (...) {
    failed_ = std::current_exception();  // a batch half made leaves the loader where no next batch is defined
    throw;
  }
}

void Loader::next_batch(Batch& batch) {
  const std::int64_t batch_rows = impl_->batch_rows();
  if (impl_->prefetch_rows() <= 0) return make_here(batch);
  PrefetchTiming timing;
  if (since_last_batch_) timing.caller_s = since_last_batch_->seconds();
  if (!prefetcher_ && use_thread_)  // whole batches: prefetch_rows rounded up
    prefetcher_ = std::make_unique<Prefetcher>(
        *impl_, static_cast<std::size_t>((impl_->prefetch_rows() + batch_rows - 1) / batch_rows));
  bool made = false;
  if (prefetcher_) {
    made = prefetcher_->pop(batch, impl_->provenance, timing.make_s);  // also moves the consumed state on
    if (!made) {  // drained: the Impl is ours again
      prefetcher_.reset();
      impl_->stop_recording();
    }
  }
  if (!made) {
    const Stopwatch making;
    make_here(batch);
    timing.make_s = making.seconds();
    ++made_inline_;
  }
  use_thread_ = chooser_(timing);
  if (prefetcher_ && !use_thread_) prefetcher_->finish_after_current();
  since_last_batch_.emplace();
}

void Loader::make_here(Batch& batch) {
  std::vector<PackedRow> rows;
  for (std::int64_t r = 0; r < impl_->batch_rows(); ++r) rows.push_back(impl_->next_row());
  impl_->assemble(rows, batch, impl_->provenance);
  impl_->recycle(rows);
}

Batch Loader::next() {
  Batch batch;
  next_into(batch);
  return batch;
}

const std::vector<RowProvenance>& Loader::last_provenance() const { return impl_->provenance; }

std::string Loader::state() const {
  return encode_state(prefetcher_ ? prefetcher_->consumed() : impl_->save());
}

void Loader::restore(const std::vector<std::string>& saved_states) {
  // Checked here, before impl_ is touched: once the prefetch thread runs, impl_ belongs to it.
  LLMTRAIN_CHECK(!prefetcher_, "data loader: restore() must come before the first next()");
  impl_->restore(saved_states);
}

LoaderStats Loader::stats() const {
  LoaderStats stats = prefetcher_ ? prefetcher_->stats() : impl_->stats();
  stats.batches_made_inline = made_inline_;  // counted on the prefetching path only
  return stats;
}

std::int64_t default_threads(int local_ranks) {
  std::int64_t cores = std::thread::hardware_concurrency();
  return std::max<std::int64_t>(1, cores / std::max(1, local_ranks));
}

}  // namespace llmtrain::data
