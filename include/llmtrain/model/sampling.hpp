// The next token from a row of logits: greedy (temperature 0), or drawn from softmax(logits / temperature)
// restricted to the smallest set of most likely tokens whose probability reaches top_p (nucleus sampling).
//
// A draw is a pure function of the logits and (seed, stream, position): the uniform number comes from
// Philox keyed by the seed at counter (stream, position), so the same seed repeats a continuation bit for
// bit, and a prompt's draws do not depend on the other prompts (only the logits' last bits may, through the
// shape of the products that computed them).
#pragma once

#include <cstdint>

#include "llmtrain/core/batch.hpp"

namespace llmtrain::model {

struct SamplingOptions {
  double temperature = 0;  // 0: greedy
  double top_p = 1;        // in (0, 1]
  std::uint64_t seed = 0;
};

// Throws llmtrain::Error naming --temperature or --top-p when out of range.
void validate(const SamplingOptions& options);

// Among ids [0, vocab) of `logits` (the model's row may be wider: padding ids are never chosen). Greedy
// takes the lowest id of the largest logit, as torch.argmax does.
TokenId next_token(const float* logits, std::int64_t vocab, const SamplingOptions& options, std::uint64_t stream,
                   std::uint64_t position);

}  // namespace llmtrain::model
