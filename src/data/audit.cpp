// Exactly-once audit of simulated provenance (see audit.hpp).
#include "audit.hpp"

#include <algorithm>
#include <ostream>

namespace llmtrain::data {

void CoverageAudit::add(const RowProvenance& row) {
  for (const SpanInfo& s : row.spans) {
    if (s.token_end == s.token_begin) continue;  // a piece holding only BOS / EOS
    tokens_[s.dataset] += s.token_end - s.token_begin;
    auto& ranges = ranges_[{s.dataset, s.file, s.byte_offset, s.epoch}];
    // Insert [begin, end) into the sorted, disjoint list, merging neighbours; any overlap is a duplicate.
    auto it = std::lower_bound(ranges.begin(), ranges.end(), std::make_pair(s.token_begin, s.token_end));
    const bool overlaps_next = it != ranges.end() && it->first < s.token_end;
    const bool overlaps_previous = it != ranges.begin() && std::prev(it)->second > s.token_begin;
    if (overlaps_next || overlaps_previous) {
      ++overlaps_;
      continue;
    }
    it = ranges.insert(it, {s.token_begin, s.token_end});
    if (std::next(it) != ranges.end() && std::next(it)->first == it->second) {
      it->second = std::next(it)->second;
      ranges.erase(std::next(it));
    }
    if (it != ranges.begin() && std::prev(it)->second == it->first) {
      std::prev(it)->second = it->second;
      ranges.erase(it);
    }
  }
}

void CoverageAudit::settle(const std::map<std::string, std::uint32_t>& finished_epochs) {
  for (auto it = ranges_.begin(); it != ranges_.end();) {
    const auto& [dataset, file, offset, epoch] = it->first;
    auto done = finished_epochs.find(dataset);
    if (done == finished_epochs.end() || epoch >= done->second) {
      ++it;
      continue;
    }
    auto whole = first_whole_.find(dataset);
    if (whole != first_whole_.end() && epoch < whole->second) {  // began before the resume: duplicates only
      it = ranges_.erase(it);
      continue;
    }
    ++settled_docs_[dataset][epoch];
    const auto& ranges = it->second;
    if (ranges.size() != 1 || ranges.front().first != 0) {
      ++partial_;
    } else {
      auto [known, fresh] = length_.emplace(std::make_tuple(dataset, file, offset), ranges.front().second);
      if (!fresh && known->second != ranges.front().second) ++inconsistent_;
    }
    it = ranges_.erase(it);
  }
}

std::uint64_t CoverageAudit::report(const std::map<std::string, std::uint32_t>& finished_epochs, std::ostream& out) {
  settle(finished_epochs);
  std::uint64_t total = 0;
  for (const auto& [name, n] : tokens_) total += n;
  std::map<std::string, std::uint32_t> last_epoch;
  for (const auto& [key, ranges] : ranges_) {
    std::uint32_t& e = last_epoch[std::get<0>(key)];
    e = std::max(e, std::get<3>(key));
  }
  for (const auto& [dataset, n] : tokens_) {
    auto done = finished_epochs.find(dataset);
    const std::uint32_t finished = done == finished_epochs.end() ? 0 : done->second;
    out << "dataset '" << dataset << "': share " << (total ? double(n) / double(total) : 0.0) << " of " << total
        << " text tokens; " << finished << " epochs finished by every rank";
    std::uint64_t reference = 0;
    for (const auto& [epoch, docs] : settled_docs_[dataset]) {
      if (reference == 0) reference = docs;
      if (docs != reference) ++inconsistent_;  // a finished epoch that missed documents
    }
    if (reference > 0) out << ", " << reference << " documents in each";
    out << "; epochs " << finished << " to " << last_epoch[dataset] << " in progress";
    auto whole = first_whole_.find(dataset);
    if (whole != first_whole_.end() && whole->second > 0)
      out << "; epochs before " << whole->second << " began before the resume (checked for duplicates only)";
    out << "\n";
  }
  const std::uint64_t violations = overlaps_ + partial_ + inconsistent_;
  out << "exactly once: " << (violations == 0 ? "yes" : "NO") << " (" << overlaps_ << " token ranges delivered twice, "
      << partial_ << " documents incomplete in a finished epoch, " << inconsistent_
      << " length or document-count mismatches between finished epochs)\n";
  return violations;
}

}  // namespace llmtrain::data
