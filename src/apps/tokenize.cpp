// llmtrain-tokenize: encode JSON Lines documents with a Hugging Face tokenizer, or decode them back.
//
//   llmtrain-tokenize --tokenizer FILE [--field text] [--add-special-tokens] [INPUT.jsonl]   (ids out)
//   llmtrain-tokenize --tokenizer FILE --decode [--field text] [INPUT.jsonl]                (text out)
//   llmtrain-tokenize --tokenizer FILE --bench [--passes N] [--field text] [INPUT.jsonl]    (throughput)
//
// Encoding writes one JSON array of ids per input line, in input order. Decoding reads one JSON array of
// ids per line and writes {"<field>": "<text>"}. Input comes from the file or stdin. Any bad input stops
// with "file:line: reason" on stderr and exit status 1.
#include <sys/stat.h>
#include <time.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "llmtrain/core/error.hpp"
#include "llmtrain/core/timer.hpp"
#include "llmtrain/tokenizer/tokenizer.hpp"

namespace {

using llmtrain::tokenizer::TokenId;
using llmtrain::tokenizer::Tokenizer;
using json = nlohmann::json;

struct Options {
  std::string tokenizer, field = "text", input;
  bool decode = false, add_special_tokens = false, bench = false;
  long passes = 1;  // --bench: passes over the input in this process (the first with a cold cache)
};

const char* const kUsage =
    "usage: llmtrain-tokenize --tokenizer FILE [--field NAME] [--decode | --add-special-tokens | --bench] "
    "[INPUT.jsonl]\n";

const char* const kHelp =
    "Encodes JSON Lines documents with a Hugging Face tokenizer (one JSON array of ids per input line, in order),\n"
    "or decodes arrays of ids back to text. Input: INPUT.jsonl, or stdin when absent or '-'.\n"
    "  --tokenizer FILE        tokenizer.json, or a directory holding tokenizer.json, vocab.json + merges.txt,\n"
    "                          or encoder.json + vocab.bpe (required)\n"
    "  --field NAME            the JSON field holding the text (default: text)\n"
    "  --add-special-tokens    apply the tokenizer's post-processor (e.g. Llama's <|begin_of_text|>)\n"
    "  --decode                read one JSON array of ids per line (integers in [0, 2^31)), write {\"NAME\": text}\n"
    "  --bench                 encode without output; print documents, bytes, tokens and speed (one thread),\n"
    "                          per wall-clock second and per CPU second of the encoding thread\n"
    "  --passes N              with --bench: encode the input N times, one line per pass (the first pass starts\n"
    "                          from a cold pre-token cache, the later ones reuse it; default 1)\n"
    "  -h, --help              this help\n"
    "examples:\n"
    "  echo '{\"text\": \"Hello world\"}' | llmtrain-tokenize --tokenizer inputs/tokenizers/gpt2\n"
    "  echo '[15496, 995]' | llmtrain-tokenize --tokenizer inputs/tokenizers/gpt2 --decode\n"
    "  llmtrain-tokenize --tokenizer tokenizer.json --bench corpus.jsonl\n"
    "Bad input stops with 'file:line: reason' on stderr and exit status 1.\n";

Options parse_args(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      LLMTRAIN_CHECK(i + 1 < argc, "option ", a, " needs a value\n", kUsage);
      return argv[++i];
    };
    if (a == "--tokenizer") o.tokenizer = value();
    else if (a == "--field") o.field = value();
    else if (a == "--decode") o.decode = true;
    else if (a == "--add-special-tokens") o.add_special_tokens = true;
    else if (a == "--bench") o.bench = true;
    else if (a == "--passes") {
      const std::string v = value();
      char* end = nullptr;
      o.passes = std::strtol(v.c_str(), &end, 10);
      LLMTRAIN_CHECK(!v.empty() && *end == '\0' && o.passes >= 1, "--passes: expected an integer >= 1, got '", v, "'");
    }
    else if (a == "--help" || a == "-h") {
      std::cout << kUsage << "\n" << kHelp;
      std::exit(0);
    } else if (!a.empty() && a[0] == '-' && a != "-") LLMTRAIN_FAIL("unknown option ", a, "\n", kUsage);
    else {
      LLMTRAIN_CHECK(o.input.empty(), "more than one input file given\n", kUsage);
      o.input = a;
    }
  }
  LLMTRAIN_CHECK(!o.tokenizer.empty(), "--tokenizer is required\n", kUsage);
  LLMTRAIN_CHECK(int(o.decode) + int(o.add_special_tokens) + int(o.bench) <= 1,
                 "--decode, --add-special-tokens and --bench exclude each other\n", kUsage);
  LLMTRAIN_CHECK(o.passes == 1 || o.bench, "--passes needs --bench\n", kUsage);
  return o;
}

std::string field_text(const std::string& line, const Options& o, const std::string& where) {
  json doc;
  try {
    doc = json::parse(line);
  } catch (const json::exception& e) {
    LLMTRAIN_FAIL(where, ": malformed JSON: ", e.what());
  }
  LLMTRAIN_CHECK(doc.is_object(), where, ": expected a JSON object");
  auto it = doc.find(o.field);
  LLMTRAIN_CHECK(it != doc.end(), where, ": missing field \"", o.field, "\"");
  LLMTRAIN_CHECK(it->is_string(), where, ": field \"", o.field, "\" is not a string");
  return it->get<std::string>();
}

// Token ids are integers in [0, 2^31): json's own conversion would truncate 1.5 to 1 and wrap 2^32 + 1 to 1.
std::vector<TokenId> parse_ids(const std::string& line, const std::string& where) {
  json ids;
  try {
    ids = json::parse(line);
  } catch (const json::exception& e) {
    LLMTRAIN_FAIL(where, ": expected a JSON array of token ids: ", e.what());
  }
  LLMTRAIN_CHECK(ids.is_array(), where, ": expected a JSON array of token ids");
  std::vector<TokenId> out;
  out.reserve(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const json& id = ids[i];
    const bool valid = id.is_number_unsigned() ? id.get<std::uint64_t>() <= INT32_MAX
                                               : id.is_number_integer() && id.get<std::int64_t>() >= 0 &&
                                                     id.get<std::int64_t>() <= INT32_MAX;
    LLMTRAIN_CHECK(valid, where, ": token id ", id.dump(), " at position ", i,
                   " is not an integer in [0, 2147483647]");
    out.push_back(static_cast<TokenId>(id.get<std::int64_t>()));
  }
  return out;
}

// Writes to stdout; a failed write (a full disk, a closed pipe) is an error, not a silent exit status. stdio
// may report the failure of a flush it makes inside fwrite only through the stream's error flag.
void write_out(const std::string& data) {
  const bool written = std::fwrite(data.data(), 1, data.size(), stdout) == data.size();
  LLMTRAIN_CHECK(written && !std::ferror(stdout), "<stdout>: write failed: ", std::strerror(errno));
}

void write_ids(const std::vector<TokenId>& ids, std::string& out) {
  out += '[';
  char buf[16];
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const int n = std::snprintf(buf, sizeof buf, i ? ",%d" : "%d", ids[i]);
    out.append(buf, static_cast<std::size_t>(n));
  }
  out += "]\n";
}

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// --bench: the texts are read first, then encoded `passes` times; only the encoding is timed.
void bench(const Tokenizer& tokenizer, const std::vector<std::string>& texts, long passes) {
  std::size_t bytes = 0;
  for (const std::string& text : texts) bytes += text.size();
  for (long pass = 1; pass <= passes; ++pass) {
    std::size_t tokens = 0;
    const llmtrain::Stopwatch watch;
    const double cpu_start = thread_cpu_seconds();
    for (const std::string& text : texts) tokens += tokenizer.encode(text).size();
    const double cpu = thread_cpu_seconds() - cpu_start, seconds = watch.seconds();
    std::printf("pass %ld  documents %zu  bytes %zu  tokens %zu  seconds %.3f  cpu_seconds %.3f  MB/s %.2f  "
                "MB/cpu-s %.2f  tokens/s %.0f  (one thread)\n", pass, texts.size(), bytes, tokens, seconds, cpu,
                seconds > 0 ? bytes / seconds / 1e6 : 0.0, cpu > 0 ? bytes / cpu / 1e6 : 0.0,
                seconds > 0 ? tokens / seconds : 0.0);
  }
}

int run(const Options& o) {
  const Tokenizer tokenizer = Tokenizer::load(o.tokenizer);
  std::ifstream file;
  if (!o.input.empty() && o.input != "-") {
    struct stat st {};
    LLMTRAIN_CHECK(::stat(o.input.c_str(), &st) == 0, o.input, ": cannot open input file: ", std::strerror(errno));
    LLMTRAIN_CHECK(!S_ISDIR(st.st_mode), o.input, ": is a directory (expected a JSON Lines file)");
    file.open(o.input, std::ios::binary);
    LLMTRAIN_CHECK(file, o.input, ": cannot open input file: ", std::strerror(errno));
  }
  std::istream& in = file.is_open() ? static_cast<std::istream&>(file) : std::cin;
  const std::string name = file.is_open() ? o.input : "<stdin>";
  std::string line, out;
  std::vector<std::string> texts;  // --bench
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    const std::string where = name + ":" + std::to_string(number);
    out.clear();
    if (o.decode) {
      out = json{{o.field, tokenizer.decode(parse_ids(line, where))}}.dump(-1, ' ', false, json::error_handler_t::replace);
      out += '\n';
    } else if (o.bench) {
      texts.push_back(field_text(line, o, where));
    } else {
      const std::string text = field_text(line, o, where);
      write_ids(o.add_special_tokens ? tokenizer.encode_with_special_tokens(text) : tokenizer.encode(text), out);
    }
    write_out(out);
  }
  LLMTRAIN_CHECK(!in.bad(), name, ": read error: ", std::strerror(errno));
  if (o.bench) bench(tokenizer, texts, o.passes);
  LLMTRAIN_CHECK(std::fflush(stdout) == 0 && !std::ferror(stdout), "<stdout>: write failed: ", std::strerror(errno));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse_args(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "llmtrain-tokenize: %s\n", e.what());
    return 1;
  }
}
