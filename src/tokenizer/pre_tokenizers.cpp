// Pre-tokenizer steps (see pre_tokenizers.hpp), following Hugging Face's PreTokenizedString::split
// semantics: pieces are emitted in order and empty pieces are dropped.
#include "pre_tokenizers.hpp"

#include <algorithm>

#include "unicode.hpp"

namespace llmtrain::tokenizer {
namespace {

struct Span {
  std::size_t begin, end;
  bool is_match;
};

// Applies a SplitDelimiterBehavior to the alternating gaps and matches covering the text, in place.
void apply_behavior(std::vector<Span>& parts, SplitBehavior behavior) {
  if (behavior == SplitBehavior::kIsolated) return;
  std::vector<Span> out;
  bool previous_match = false;
  if (behavior == SplitBehavior::kMergedWithNext) std::reverse(parts.begin(), parts.end());
  for (const Span& s : parts) {
    switch (behavior) {
      case SplitBehavior::kRemoved:
        if (!s.is_match) out.push_back(s);
        break;
      case SplitBehavior::kContiguous:
        if (s.is_match == previous_match && !out.empty()) out.back().end = s.end;
        else out.push_back(s);
        break;
      case SplitBehavior::kMergedWithPrevious:
        if (s.is_match && !previous_match && !out.empty()) out.back().end = s.end;
        else out.push_back(s);
        break;
      case SplitBehavior::kMergedWithNext:  // walking backwards
        if (s.is_match && !previous_match && !out.empty()) out.back().begin = s.begin;
        else out.push_back(s);
        break;
      case SplitBehavior::kIsolated:
        break;
    }
    previous_match = s.is_match;
  }
  if (behavior == SplitBehavior::kMergedWithNext) std::reverse(out.begin(), out.end());
  parts.swap(out);
}

class Split final : public PreTokenizer {
 public:
  Split(std::unique_ptr<Matcher> matcher, SplitBehavior behavior, bool invert)
      : matcher_(std::move(matcher)), behavior_(behavior), invert_(invert) {}

  void split(std::string_view text, bool is_first, PieceSink& sink) const override {
    auto emit = [&](std::size_t b, std::size_t e) {
      if (e > b) sink(text.substr(b, e - b), is_first && b == 0);
    };
    std::size_t prev = 0;
    if (behavior_ == SplitBehavior::kIsolated && !invert_) {  // the common case streams
      for_each_match(*matcher_, text, [&](std::size_t b, std::size_t e) {
        emit(prev, b);
        emit(b, e);
        prev = e;
      });
      emit(prev, text.size());
      return;
    }
    std::vector<Span> parts;
    for_each_match(*matcher_, text, [&](std::size_t b, std::size_t e) {
      if (b != prev) parts.push_back({prev, b, invert_});
      parts.push_back({b, e, !invert_});
      prev = e;
    });
    if (prev != text.size()) parts.push_back({prev, text.size(), invert_});
    apply_behavior(parts, behavior_);
    for (const Span& s : parts) emit(s.begin, s.end);
  }

 private:
  std::unique_ptr<Matcher> matcher_;
  SplitBehavior behavior_;
  bool invert_;
};

// BPE runs on raw bytes (bpe_model.hpp), so ByteLevel itself only adds the prefix space and splits.
class ByteLevel final : public PreTokenizer {
 public:
  ByteLevel(bool add_prefix_space, bool use_regex)
      : add_prefix_space_(add_prefix_space), regex_(use_regex ? make_gpt2_matcher() : nullptr) {}

  void split(std::string_view text, bool is_first, PieceSink& sink) const override {
    std::string prefixed;
    if (add_prefix_space_ && !text.empty() && text[0] != ' ') {
      prefixed = " " + std::string(text);
      text = prefixed;
    }
    if (!regex_) {
      if (!text.empty()) sink(text, is_first);
      return;
    }
    std::size_t prev = 0;
    for_each_match(*regex_, text, [&](std::size_t b, std::size_t e) {
      if (b > prev) sink(text.substr(prev, b - prev), is_first && prev == 0);
      if (e > b) sink(text.substr(b, e - b), is_first && b == 0);
      prev = e;
    });
    if (prev < text.size()) sink(text.substr(prev), is_first && prev == 0);
  }

 private:
  bool add_prefix_space_;
  std::unique_ptr<Matcher> regex_;
};

// Digits: numbers (Unicode N, like Rust's char::is_numeric) are isolated, one by one or as runs.
class Digits final : public PreTokenizer {
 public:
  explicit Digits(bool individual) : individual_(individual) {}
  void split(std::string_view text, bool is_first, PieceSink& sink) const override {
    std::size_t piece = 0, i = 0;
    bool in_digits = false;
    while (i < text.size()) {
      int len = 0;
      const bool digit = unicode::char_class(unicode::decode(text.data() + i, &len)) == unicode::kNumber;
      if (i > piece && (digit != in_digits || (digit && individual_))) {
        sink(text.substr(piece, i - piece), is_first && piece == 0);
        piece = i;
      }
      in_digits = digit;
      i += static_cast<std::size_t>(len);
    }
    if (i > piece) sink(text.substr(piece, i - piece), is_first && piece == 0);
  }

 private:
  bool individual_;
};

// Metaspace: spaces become the replacement character (U+2581), which may be prepended, and the text is
// split before each replacement character (SplitDelimiterBehavior::MergedWithNext).
class Metaspace final : public PreTokenizer {
 public:
  Metaspace(std::string replacement, PrependScheme scheme, bool split)
      : replacement_(std::move(replacement)), scheme_(scheme), split_(split) {}

  void split(std::string_view text, bool is_first, PieceSink& sink) const override {
    if (text.empty()) return;
    std::string s;
    s.reserve(text.size() + replacement_.size());
    for (char c : text) {
      if (c == ' ') s += replacement_;
      else s += c;
    }
    const bool starts = s.compare(0, replacement_.size(), replacement_) == 0;
    if (!starts && (scheme_ == PrependScheme::kAlways || (scheme_ == PrependScheme::kFirst && is_first)))
      s.insert(0, replacement_);
    if (!split_) {
      sink(s, is_first);
      return;
    }
    std::size_t start = 0;
    for (std::size_t p = s.find(replacement_, 1); p != std::string::npos; p = s.find(replacement_, p + 1)) {
      sink(std::string_view(s).substr(start, p - start), is_first && start == 0);
      start = p;
    }
    sink(std::string_view(s).substr(start), is_first && start == 0);
  }

 private:
  std::string replacement_;
  PrependScheme scheme_;
  bool split_;
};

class Sequence final : public PreTokenizer {
 public:
  explicit Sequence(std::vector<std::unique_ptr<PreTokenizer>> steps) : steps_(std::move(steps)) {}
  void split(std::string_view text, bool is_first, PieceSink& sink) const override {
    run(0, text, is_first, sink);
  }

 private:
  struct Next final : PieceSink {
    const Sequence* seq;
    std::size_t index;
    PieceSink* final_sink;
    Next(const Sequence* s, std::size_t i, PieceSink* f) : seq(s), index(i), final_sink(f) {}
    void operator()(std::string_view piece, bool first) override { seq->run(index, piece, first, *final_sink); }
  };
  void run(std::size_t index, std::string_view text, bool is_first, PieceSink& sink) const {
    if (index == steps_.size()) {
      sink(text, is_first);
      return;
    }
    Next next(this, index + 1, &sink);
    steps_[index]->split(text, is_first, next);
  }
  std::vector<std::unique_ptr<PreTokenizer>> steps_;
};

}  // namespace

std::unique_ptr<PreTokenizer> make_split(std::unique_ptr<Matcher> matcher, SplitBehavior behavior, bool invert) {
  return std::make_unique<Split>(std::move(matcher), behavior, invert);
}
std::unique_ptr<PreTokenizer> make_byte_level(bool add_prefix_space, bool use_regex) {
  return std::make_unique<ByteLevel>(add_prefix_space, use_regex);
}
std::unique_ptr<PreTokenizer> make_digits(bool individual_digits) { return std::make_unique<Digits>(individual_digits); }
std::unique_ptr<PreTokenizer> make_metaspace(std::string replacement, PrependScheme scheme, bool split) {
  return std::make_unique<Metaspace>(std::move(replacement), scheme, split);
}
std::unique_ptr<PreTokenizer> make_sequence(std::vector<std::unique_ptr<PreTokenizer>> steps) {
  if (steps.size() == 1) return std::move(steps[0]);
  return std::make_unique<Sequence>(std::move(steps));
}

}  // namespace llmtrain::tokenizer
