// llmtrain-generate: what a checkpoint writes, and how well it predicts text (docs/interop.md).
//
//   llmtrain-generate CKPT --prompt TEXT | --prompts FILE.jsonl [--max-new-tokens N] [--temperature T]
//                     [--top-p P] [--seed S] [--tokenizer DIR]
//   llmtrain-generate CKPT --score FILE.jsonl [--field NAME] [--stride N] [--tokenizer DIR]
//
// Generation frames each prompt as training framed a document's start (BOS where the tokenizer's
// post-processor, or [tokenizer] bos_token, puts one; no EOS), decodes incrementally with a key/value cache
// (model/decoder.hpp) and stops a prompt at the EOS id or at the model's context (data.seq_len). Scoring
// frames each document as the run did (BOS as above, EOS after it) and scores it in windows of seq_len
// inputs: a document longer than that is scored window after window, each starting `stride` tokens after
// the one before (--stride, default seq_len: windows side by side) and counting only the targets no earlier
// window counted (the rest are context).
//
// One process, on the CPU: the checkpoint is read on an MPI world of one.
#include <time.h>
#include <unistd.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <toml++/toml.h>
#include <utility>
#include <vector>

#include "llmtrain/ckpt/checkpoint.hpp"
#include "llmtrain/ckpt/saved_model.hpp"
#include "llmtrain/config/config.hpp"
#include "llmtrain/core/counted.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/core/timer.hpp"
#include "llmtrain/dist/spmd_main.hpp"
#include "llmtrain/job/options.hpp"
#include "llmtrain/model/decoder.hpp"
#include "llmtrain/model/model.hpp"
#include "llmtrain/model/sampling.hpp"
#include "llmtrain/tokenizer/tokenizer.hpp"

namespace {

using namespace llmtrain;

const char* const kUsage =
    "usage: llmtrain-generate CKPT --prompt TEXT | --prompts FILE.jsonl [--max-new-tokens N] [--temperature T]\n"
    "                         [--top-p P] [--seed S] [--batch N] [--tokenizer DIR]\n"
    "       llmtrain-generate CKPT --score FILE.jsonl [--field NAME] [--stride N] [--tokenizer DIR]\n"
    "--prompts reads the field \"prompt\" of each line; --score the field \"text\" (or --field NAME).\n"
    "--temperature 0 (the default) is greedy; --top-p keeps the most likely tokens up to that probability.\n"
    "--batch N prompts are decoded together (default 8); a seed repeats its samples for the same --batch.\n"
    "--tokenizer replaces the checkpoint's tokenizer with one of the same vocabulary size.\n";

struct Args {
  std::string checkpoint, prompt, prompts, score, field = "text", tokenizer;
  bool has_prompt = false;
  std::int64_t max_new_tokens = 64, batch = 8, stride = 0;
  model::SamplingOptions sampling;
};

// CPU seconds of the whole process (every thread): the figure perf/generate compares on a shared machine.
double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

std::int64_t positive_integer(const std::string& flag, const std::string& v) {
  LLMTRAIN_CHECK(!v.empty() && v.size() < 19 && v.find_first_not_of("0123456789") == std::string::npos &&
                     std::stoll(v) > 0,
                 flag, ": expected a positive integer, got '", v, "'");
  return std::stoll(v);
}

double number(const std::string& flag, const std::string& v) {
  std::size_t used = 0;
  double out = 0;
  try {
    out = std::stod(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  LLMTRAIN_CHECK(used == v.size() && !v.empty(), flag, ": expected a number, got '", v, "'");
  return out;
}

Args parse(int argc, char** argv) {
  LLMTRAIN_CHECK(argc >= 2, "no checkpoint given\n", kUsage);
  Args a;
  a.checkpoint = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string option = argv[i];
    auto value = [&]() -> std::string {
      LLMTRAIN_CHECK(i + 1 < argc, option, ": expected a value\n", kUsage);
      return argv[++i];
    };
    if (option == "--prompt") a.prompt = value(), a.has_prompt = true;
    else if (option == "--prompts") a.prompts = value();
    else if (option == "--score") a.score = value();
    else if (option == "--field") a.field = value();
    else if (option == "--tokenizer") a.tokenizer = value();
    else if (option == "--max-new-tokens") a.max_new_tokens = positive_integer(option, value());
    else if (option == "--batch") a.batch = positive_integer(option, value());
    else if (option == "--stride") a.stride = positive_integer(option, value());
    else if (option == "--temperature") a.sampling.temperature = number(option, value());
    else if (option == "--top-p") a.sampling.top_p = number(option, value());
    else if (option == "--seed") a.sampling.seed = std::uint64_t(positive_integer(option, value()));
    else LLMTRAIN_FAIL("unknown option '", option, "'\n", kUsage);
  }
  LLMTRAIN_CHECK(int(a.has_prompt) + int(!a.prompts.empty()) + int(!a.score.empty()) == 1,
                 "give exactly one of --prompt, --prompts and --score\n", kUsage);
  model::validate(a.sampling);
  return a;
}

// The field `field` of every non-blank line of a JSON Lines file; an error names the file and the line.
std::vector<std::string> read_field(const std::string& path, const std::string& field) {
  std::ifstream in(path);
  LLMTRAIN_CHECK(in.is_open(), path, ": cannot open");
  std::vector<std::string> out;
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json record;
    try {
      record = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      LLMTRAIN_FAIL(path, ":", number, ": not JSON (", e.what(), ")");
    }
    LLMTRAIN_CHECK(record.is_object() && record.contains(field) && record[field].is_string(), path, ":", number,
                   ": no string field \"", field, "\"");
    out.push_back(record[field].get<std::string>());
  }
  LLMTRAIN_CHECK(!out.empty(), path, ": no lines");
  return out;
}

// Inference reads parameters only: the checkpoint's units, whole, and no gradients.
class FrozenUnits final : public model::UnitAccess<float> {
 public:
  explicit FrozenUnits(std::vector<model::ParamUnit<float>> units) : units_(std::move(units)) {}
  const float* acquire(int unit) override { return units_[std::size_t(unit)].flat.data(); }
  void release(int) override {}
  float* gradient(int) override { LLMTRAIN_FAIL("llmtrain-generate computes no gradients"); }
  void grad_ready(int) override {}

 private:
  std::vector<model::ParamUnit<float>> units_;
};

// The checkpoint's model and tokenizer, and the tokens its documents were framed with.
struct Loaded {
  ModelConfig config;
  std::unique_ptr<FrozenUnits> units;
  std::optional<tokenizer::Tokenizer> tok;
  job::DocumentFraming framing;
};

Loaded load(const Args& a, ckpt::Reader& reader) {
  Loaded out;
  out.config = ckpt::saved_model_config(reader);
  out.units = std::make_unique<FrozenUnits>(ckpt::read_parameters(reader, out.config));
  const toml::table saved = toml::parse(reader.metadata().config);  // saved_model_config parsed it already
  Config config = default_config();
  config.source_file = a.checkpoint + " (its saved configuration)";
  config.tokenizer.path = saved["tokenizer"]["path"].value_or(std::string());
  config.tokenizer.bos_token = saved["tokenizer"]["bos_token"].value_or(std::string());
  config.tokenizer.eos_token = saved["tokenizer"]["eos_token"].value_or(std::string());
  std::optional<tokenizer::Tokenizer> own;
  try {
    own = tokenizer::Tokenizer::load(config.tokenizer.path);
  } catch (const Error& e) {
    LLMTRAIN_CHECK(!a.tokenizer.empty(), "the checkpoint's tokenizer cannot be loaded (", e.what(),
                   "); name one with --tokenizer DIR");
  }
  if (a.tokenizer.empty()) {
    out.tok = std::move(own);
  } else {
    out.tok = tokenizer::Tokenizer::load(a.tokenizer);
    // The size the model was trained against: its tokenizer's, or (that one gone) the embedding's rows.
    const std::int64_t expected = own ? std::int64_t(own->vocab_size()) : out.config.vocab_size;
    LLMTRAIN_CHECK(std::int64_t(out.tok->vocab_size()) == expected, "--tokenizer ", a.tokenizer, " has ",
                   out.tok->vocab_size(), " tokens, the checkpoint's tokenizer has ", expected,
                   ": its ids would stand for other text");
    std::cerr << "note: --tokenizer " << a.tokenizer << " replaces the checkpoint's tokenizer ("
              << config.tokenizer.path << ") without a fingerprint check\n";
    config.tokenizer.path = a.tokenizer;
  }
  LLMTRAIN_CHECK(std::int64_t(out.tok->vocab_size()) <= out.config.vocab_size, "the tokenizer has ",
                 out.tok->vocab_size(), " tokens, more than the model's ", out.config.vocab_size);
  out.framing = job::document_framing(config, *out.tok);
  return out;
}

std::vector<TokenId> framed(const Loaded& m, const std::string& text, bool with_eos) {
  std::vector<TokenId> ids;
  if (m.framing.bos_id) ids.push_back(*m.framing.bos_id);
  m.tok->encode(text, ids);
  if (with_eos && m.framing.eos_id) ids.push_back(*m.framing.eos_id);
  return ids;
}

// A prompt's ids and how many of them lead it without being its text (a BOS; for an empty prompt without
// one, the EOS that separates documents, so that the model starts a document as llm.c's samples do).
std::pair<std::vector<TokenId>, std::size_t> framed_prompt(const Loaded& m, const std::string& text) {
  std::vector<TokenId> ids = framed(m, text, false);
  if (ids.empty() && m.framing.eos_id) return {{*m.framing.eos_id}, 1};
  return {ids, m.framing.bos_id ? 1 : 0};
}

// Prints a sequence's text as it grows: only bytes that can no longer change (a trailing, still incomplete
// UTF-8 character waits for its next token), invalid ones as U+FFFD.
class TextPrinter {
 public:
  TextPrinter(const tokenizer::Tokenizer& tok, std::vector<TokenId> ids) : tok_(tok), ids_(std::move(ids)) {}
  void add(TokenId id) { ids_.push_back(id); }
  void flush(bool final) {
    const std::string bytes = tok_.decode(ids_);
    std::size_t stable = bytes.size();
    if (!final) {  // hold back the start of a multi-byte character whose continuation bytes are missing
      for (std::size_t back = 1; back <= 3 && back <= bytes.size(); ++back) {
        const unsigned char c = static_cast<unsigned char>(bytes[bytes.size() - back]);
        if ((c & 0xC0) != 0x80) {
          const std::size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
          if (need > back) stable = bytes.size() - back;
          break;
        }
      }
    }
    if (stable < printed_) return;  // a decoder that rewrote earlier text: wait for the end
    std::fputs(tokenizer::to_valid_utf8(std::string_view(bytes).substr(printed_, stable - printed_)).c_str(), stdout);
    printed_ = stable;
    std::fflush(stdout);
  }

 private:
  const tokenizer::Tokenizer& tok_;
  std::vector<TokenId> ids_;
  std::size_t printed_ = 0;
};

int generate(const Args& a, Loaded& m) {
  const std::vector<std::string> prompts =
      a.has_prompt ? std::vector<std::string>{a.prompt} : read_field(a.prompts, "prompt");
  model::Model<float> net(m.config, model::Recompute::Blocks, *m.units);
  const std::int64_t context = m.config.max_seq_len, vocab = std::int64_t(m.tok->vocab_size());
  // Prompts go in batches of --batch whatever stdout is (a batch's products round differently from a lone
  // prompt's, which can change a sampled token: the same command must print the same text). On a terminal a
  // batch of one is printed as it grows; anything else when its batch is done.
  const std::int64_t batch = a.batch;
  const bool stream = isatty(fileno(stdout)) != 0 && (prompts.size() == 1 || batch == 1);
  std::int64_t generated = 0, prompt_tokens = 0;
  bool hit_context = false;
  const Stopwatch watch;
  const double cpu_start = cpu_seconds();
  for (std::size_t first = 0; first < prompts.size(); first += std::size_t(batch)) {
    const std::size_t n = std::min(prompts.size() - first, std::size_t(batch));
    std::vector<std::vector<TokenId>> ids;
    std::vector<TextPrinter> printers;
    std::int64_t longest = 0;
    for (std::size_t r = 0; r < n; ++r) {
      auto [prompt_ids, lead] = framed_prompt(m, prompts[first + r]);
      ids.push_back(std::move(prompt_ids));
      const std::string which = a.has_prompt ? "--prompt" : a.prompts + ": prompt " + std::to_string(first + r + 1);
      LLMTRAIN_CHECK(!ids.back().empty(), which,
                     " is empty, and the tokenizer frames documents with no BOS or EOS to start from");
      LLMTRAIN_CHECK(std::int64_t(ids.back().size()) < context, which, " has ", ids.back().size(),
                     " tokens; the model's context (data.seq_len) is ", context);
      longest = std::max(longest, std::int64_t(ids.back().size()));
      prompt_tokens += std::int64_t(ids.back().size());
      // Printed without what the framing added: the text as given, then its continuation.
      printers.emplace_back(*m.tok, std::vector<TokenId>(ids.back().begin() + std::ptrdiff_t(lead), ids.back().end()));
      if (stream) printers.back().flush(false);
    }
    model::Decoder<float> decoder(net, std::int64_t(n), std::min(context, longest + a.max_new_tokens));
    std::vector<float> logits = decoder.prefill(ids);
    std::vector<bool> done(n, false);
    for (std::int64_t step = 0; step < a.max_new_tokens; ++step) {
      std::vector<TokenId> next(n, 0);
      bool all_done = true;
      for (std::size_t r = 0; r < n; ++r) {
        if (done[r]) continue;
        next[r] = model::next_token(logits.data() + r * std::size_t(m.config.vocab_size), vocab, a.sampling,
                                    first + r, std::uint64_t(decoder.length(std::int64_t(r))));
        if (m.framing.eos_id && next[r] == *m.framing.eos_id) {
          done[r] = true;
          continue;
        }
        printers[r].add(next[r]);
        ++generated;
        if (stream) printers[r].flush(false);
        all_done = false;
      }
      if (all_done || step + 1 == a.max_new_tokens) break;
      if (longest + step >= decoder.capacity()) {  // the longest prompt's row is full
        hit_context = decoder.capacity() == context;
        break;
      }
      logits = decoder.step(next);
    }
    for (auto& p : printers) {
      p.flush(true);
      std::fputs("\n", stdout);
    }
    std::fflush(stdout);
  }
  const double seconds = watch.seconds(), cpu = cpu_seconds() - cpu_start;
  std::fprintf(stderr, "%s generated from %s of %s in %.3f s (%.3f CPU s): %.1f tokens/s%s\n",
               counted(generated, "token").c_str(), counted(prompts.size(), "prompt").c_str(),
               counted(prompt_tokens, "token").c_str(), seconds, cpu, seconds > 0 ? double(generated) / seconds : 0.0,
               hit_context ? " (stopped at the model's context, data.seq_len)" : "");
  return 0;
}

// Sum and count of the losses of targets (skip, len] of a window of `len` inputs: the model's own forward
// loss when every target counts, else the cross-entropy of its logits (the first `skip` targets are context
// an earlier window scored).
model::LossSum window_loss(model::Model<float>& net, const Batch& b, std::int64_t skip) {
  if (skip == 0) return net.forward(b);
  const std::vector<float> logits = net.logits(b);
  const std::int64_t V = net.config().vocab_size;
  model::LossSum out;
  for (std::int64_t t = skip; t < b.seq_len; ++t) {
    const float* z = logits.data() + t * V;
    const float top = *std::max_element(z, z + V);
    double sum = 0;
    for (std::int64_t j = 0; j < V; ++j) sum += std::exp(double(z[j]) - double(top));
    out.sum += std::log(sum) + double(top) - double(z[b.tokens[std::size_t(t + 1)]]);
    ++out.count;
  }
  return out;
}

int score(const Args& a, Loaded& m) {
  const std::vector<std::string> texts = read_field(a.score, a.field);
  model::Model<float> net(m.config, model::Recompute::Blocks, *m.units);
  const std::int64_t L = m.config.max_seq_len;
  LLMTRAIN_CHECK(a.stride <= L, "--stride ", a.stride, " exceeds the model's context (data.seq_len) ", L);
  const std::int64_t stride = a.stride > 0 ? a.stride : L;
  std::printf("# %s: windows of %lld tokens, stride %lld; documents framed%s%s\n", a.score.c_str(),
              static_cast<long long>(L), static_cast<long long>(stride), m.framing.bos_id ? " with BOS," : "",
              m.framing.eos_id ? " with EOS after each" : " without EOS");
  double total_sum = 0;
  std::int64_t total_count = 0;
  const Stopwatch watch;
  const double cpu_start = cpu_seconds();
  for (std::size_t d = 0; d < texts.size(); ++d) {
    const std::vector<TokenId> ids = framed(m, texts[d], true);
    const std::int64_t targets = std::int64_t(ids.size()) - 1;
    LLMTRAIN_CHECK(targets > 0, a.score, ": document ", d + 1, " has no token to predict");
    model::LossSum doc;
    // Window k has inputs [begin, begin + len) and targets begin + 1 ..; those up to `scored` were counted.
    for (std::int64_t begin = 0, scored = 0; scored < targets; begin += stride) {
      const std::int64_t len = std::min(L, targets - begin);
      Batch b;
      b.rows = 1;
      b.seq_len = len;
      b.tokens.assign(ids.begin() + begin, ids.begin() + begin + len + 1);
      const model::LossSum loss = window_loss(net, b, scored - begin);
      doc.sum += loss.sum;
      doc.count += loss.count;
      scored = begin + len;
    }
    total_sum += doc.sum;
    total_count += doc.count;
    std::printf("document %zu: loss %.6f perplexity %.4f over %lld tokens\n", d + 1, doc.mean(), std::exp(doc.mean()),
                static_cast<long long>(doc.count));
  }
  const double mean = total_count > 0 ? total_sum / double(total_count) : 0.0;
  std::printf("total: loss %.6f perplexity %.4f over %lld tokens in %s\n", mean, std::exp(mean),
              static_cast<long long>(total_count), counted(texts.size(), "document").c_str());
  const double seconds = watch.seconds(), cpu = cpu_seconds() - cpu_start;
  std::fprintf(stderr, "scored %lld tokens in %.3f s (%.3f CPU s): %.1f tokens/s\n",
               static_cast<long long>(total_count), seconds, cpu, seconds > 0 ? double(total_count) / seconds : 0.0);
  return 0;
}

int run(int argc, char** argv, dist::Runtime& runtime) {
  const Args a = parse(argc, argv);
  LLMTRAIN_CHECK(runtime.size() == 1, "llmtrain-generate runs on one process, not ", runtime.size());
  Kokkos::ScopeGuard kokkos;
  ckpt::Reader reader(a.checkpoint, runtime.comm());
  Loaded m = load(a, reader);
  return a.score.empty() ? generate(a, m) : score(a, m);
}

}  // namespace

int main(int argc, char** argv) {
  return dist::run_spmd_tool(argc, argv, kUsage, [&](dist::Runtime& runtime) { return run(argc, argv, runtime); });
}
