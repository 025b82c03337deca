// The reference llmtrain-generate is checked against (generate_test.sh): the same checkpoint run through
// the training model's full forward pass, without a key/value cache.
//   generate_probe greedy CKPT TOKENIZER N TEXT  the text and its greedy continuation of at most N tokens, each
//                                             the argmax of Model::logits over the whole sequence so far
//   generate_probe score CKPT TOKENIZER FILE  per document of FILE.jsonl (field "text", framed with the
//                                             tokenizer's default BOS / EOS), the mean of Model::forward's
//                                             losses over windows of seq_len side by side
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "llmtrain/ckpt/checkpoint.hpp"
#include "llmtrain/ckpt/saved_model.hpp"
#include "llmtrain/config/config.hpp"
#include "llmtrain/dist/spmd_main.hpp"
#include "llmtrain/job/options.hpp"
#include "llmtrain/model/local_units.hpp"
#include "llmtrain/model/model.hpp"
#include "llmtrain/tokenizer/tokenizer.hpp"

namespace {

using namespace llmtrain;

int probe(int argc, char** argv, dist::Runtime& runtime) {
  const std::string mode = argv[1];
  Kokkos::ScopeGuard kokkos;
  ckpt::Reader reader(argv[2], runtime.comm());
  const ModelConfig config = ckpt::saved_model_config(reader);
  model::LocalUnits<float> units(config);
  reader.read_units("model", units.params(), "");
  model::Model<float> net(config, model::Recompute::None, units);
  const auto tok = tokenizer::Tokenizer::load(argv[3]);
  const job::DocumentFraming framing = job::document_framing(default_config(), tok);
  if (mode == "greedy" && argc == 6) {
    std::vector<TokenId> ids;
    if (framing.bos_id) ids.push_back(*framing.bos_id);
    const std::size_t start = ids.size();
    tok.encode(argv[5], ids);
    for (int n = 0; n < std::stoi(argv[4]) && std::int64_t(ids.size()) < config.max_seq_len; ++n) {
      Batch b;
      b.rows = 1;
      b.seq_len = std::int64_t(ids.size());
      b.tokens = ids;
      b.tokens.push_back(0);
      const std::vector<float> logits = net.logits(b);
      const float* last = logits.data() + (b.seq_len - 1) * config.vocab_size;
      const auto next = TokenId(std::max_element(last, last + tok.vocab_size()) - last);
      if (framing.eos_id && next == *framing.eos_id) break;
      ids.push_back(next);
    }
    std::printf("%s\n", tokenizer::to_valid_utf8(tok.decode(ids.data() + start, ids.size() - start)).c_str());
    return 0;
  }
  if (mode == "score" && argc == 5) {
    std::ifstream in(argv[4]);
    std::string line;
    for (int d = 1; std::getline(in, line); ++d) {
      std::vector<TokenId> ids;
      if (framing.bos_id) ids.push_back(*framing.bos_id);
      tok.encode(nlohmann::json::parse(line)["text"].get<std::string>(), ids);
      if (framing.eos_id) ids.push_back(*framing.eos_id);
      model::LossSum total;
      for (std::size_t begin = 0; begin + 1 < ids.size(); begin += std::size_t(config.max_seq_len)) {
        Batch b;
        b.rows = 1;
        b.seq_len = std::min<std::int64_t>(config.max_seq_len, std::int64_t(ids.size() - begin) - 1);
        b.tokens.assign(ids.begin() + std::ptrdiff_t(begin), ids.begin() + std::ptrdiff_t(begin) + b.seq_len + 1);
        const model::LossSum loss = net.forward(b);
        total.sum += loss.sum;
        total.count += loss.count;
      }
      std::printf("document %d: loss %.6f over %lld tokens\n", d, total.mean(), static_cast<long long>(total.count));
    }
    return 0;
  }
  std::fprintf(stderr, "usage: generate_probe greedy CKPT TOKENIZER N TEXT | score CKPT TOKENIZER FILE\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: generate_probe greedy CKPT TOKENIZER N TEXT | score CKPT TOKENIZER FILE\n");
    return 2;
  }
  return dist::run_spmd(argc, argv, [&](dist::Runtime& runtime) { return probe(argc, argv, runtime); });
}
