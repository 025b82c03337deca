// Pre-tokenizers of tokenizer.json: they cut normalized text into pieces that BPE encodes separately.
// Each step passes its pieces straight on to a sink (the next step, finally the model), so no list of
// pieces is ever built on the fast paths.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "matcher.hpp"

namespace llmtrain::tokenizer {

class PieceSink {
 public:
  // is_first: the piece starts at offset 0 of the input text (Metaspace's prepend_scheme "first").
  virtual void operator()(std::string_view piece, bool is_first) = 0;

 protected:
  ~PieceSink() = default;
};

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  virtual void split(std::string_view text, bool is_first, PieceSink& sink) const = 0;
};

// Split's "behavior": what happens to the matched parts (see Hugging Face's SplitDelimiterBehavior).
enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

std::unique_ptr<PreTokenizer> make_split(std::unique_ptr<Matcher> matcher, SplitBehavior behavior, bool invert);
std::unique_ptr<PreTokenizer> make_byte_level(bool add_prefix_space, bool use_regex);
std::unique_ptr<PreTokenizer> make_digits(bool individual_digits);
enum class PrependScheme { kAlways, kFirst, kNever };
std::unique_ptr<PreTokenizer> make_metaspace(std::string replacement, PrependScheme scheme, bool split);
std::unique_ptr<PreTokenizer> make_sequence(std::vector<std::unique_ptr<PreTokenizer>> steps);

}  // namespace llmtrain::tokenizer
