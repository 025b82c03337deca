// Replaying a batch's Progress onto the consumed state, and the stats a state implies (see progress.hpp).
#include "progress.hpp"

#include <algorithm>

#include "llmtrain/core/error.hpp"

namespace llmtrain::data {

void apply(const Progress& p, SavedState& state, Tallies& tallies, std::map<std::string, std::uint64_t>& bad_by_file) {
  // The window's moves, in the order Impl::next_row made them: rows enter at the back; a row leaves from its
  // slot and the last row takes its place.
  std::vector<std::vector<Span>>& window = state.window;
  std::size_t entered = 0;
  auto enter_until = [&](std::size_t n) {
    for (; entered < n; ++entered) window.push_back(p.entered[entered]);
  };
  for (const Progress::Pick& pick : p.picks) {
    enter_until(pick.entered_before);
    LLMTRAIN_CHECK(pick.slot < window.size(), "data loader: prefetch progress picks window slot ", pick.slot,
                   " of ", window.size());
    if (pick.slot + 1 < window.size()) window[pick.slot] = std::move(window.back());
    window.pop_back();
  }
  enter_until(p.entered.size());
  state.window_counter = p.window_counter;
  for (std::size_t d = 0; d < state.datasets.size(); ++d) {
    SavedDataset& sd = state.datasets[d];
    const StreamProgress& stream = p.streams[d];
    sd.tokens_since_weights = p.tokens_since_weights[d];
    sd.draw_counter = stream.draw_counter;
    sd.records_read = stream.records_read;
    sd.bad_records = stream.bad_records;
    for (const auto& [index, cursor] : stream.cursors) {  // the same shard keeps its index: fingerprints stay
      LLMTRAIN_CHECK(index < sd.cursors.size() && sd.cursors[index].shard == cursor.shard, "data loader: prefetch "
                     "progress moves cursor ", index, " (logical shard ", cursor.shard, ") of ", sd.cursors.size());
      sd.cursors[index] = cursor;
    }
  }
  state.queue = p.queue;
  tallies = p.tallies;
  if (p.bad_by_file) bad_by_file = *p.bad_by_file;
}

LoaderStats stats_of(const SavedState& state, const Tallies& tallies,
                     const std::map<std::string, std::uint64_t>& bad_by_file) {
  LoaderStats st;
  for (std::size_t d = 0; d < state.datasets.size(); ++d) {
    const SavedDataset& sd = state.datasets[d];
    DatasetStats ds;
    ds.name = sd.name;
    ds.epoch = UINT32_MAX;
    if (!tallies.empty[d])
      for (const ShardCursor& c : sd.cursors) ds.epoch = std::min(ds.epoch, c.epoch);
    ds.records_read = sd.records_read;
    ds.bad_records = sd.bad_records;
    ds.tokens_drawn = sd.tokens_since_weights;
    ds.tokenless_documents = tallies.tokenless_docs[d];
    ds.no_tokens = tallies.no_tokens[d];
    st.datasets.push_back(ds);
  }
  // Pieces still to hand out keep their epoch open.
  auto lower = [&](const Span& span) {
    std::uint32_t& e = st.datasets[span.doc.dataset].epoch;
    e = std::min(e, span.doc.epoch);
  };
  for (const std::vector<Span>& row : state.window)
    for (const Span& span : row) lower(span);
  for (const Span& span : state.queue) lower(span);
  st.bad_records_by_file = bad_by_file;
  st.dropped_spans = tallies.dropped_spans;
  return st;
}

}  // namespace llmtrain::data
