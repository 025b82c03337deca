// Raw text -> .ltok files, one per input file, in parallel and resumably (see pretokenize.hpp).
#include "llmtrain/data/pretokenize.hpp"

#include <atomic>
#include <exception>
#include <filesystem>
#include <map>
#include <mutex>
#include <ostream>
#include <thread>
#include <vector>

#include "corpus.hpp"
#include "llmtrain/core/error.hpp"
#include "records.hpp"
#include "token_files.hpp"

namespace llmtrain::data {
namespace {

namespace fs = std::filesystem;

struct Job {
  const DatasetFiles* dataset;
  std::size_t file;
  std::string output;
};

std::string output_path(const DatasetSpec& spec, const std::string& input, const std::string& output_dir) {
  std::error_code ec;
  fs::path relative = fs::is_directory(spec.path, ec) ? fs::path(input).lexically_relative(spec.path)
                                                      : fs::path(input).filename();
  return (fs::path(output_dir) / spec.name / relative).string() + ".ltok";
}

// Encodes one input file into its .ltok; returns what it wrote.
PretokenizeReport convert(const Job& job, const LoaderOptions& options, const DocumentEncoder& encoder,
                          std::uint64_t vocab_size, TextExtractor& extractor) {
  const CorpusFile& file = job.dataset->files[job.file];
  LLMTRAIN_CHECK(!is_token_format(file.format), file.path, ": already pre-tokenized");
  PretokenizeReport r;
  LoadedBlock block = read_block(file, ShardBlock{static_cast<std::uint32_t>(job.file), 0, file.size});
  auto bad = [&](std::uint64_t offset, const std::string& why) {
    LLMTRAIN_CHECK(options.on_bad_record == BadRecordPolicy::skip, file.path, ": byte ", offset, ": ", why,
                   "; set on_bad_record = \"skip\" to skip such records");
    ++r.bad_records;
  };
  if (!block.error.empty()) bad(0, block.error);
  std::error_code ec;
  const fs::path dir = fs::path(job.output).parent_path();
  fs::create_directories(dir, ec);
  LLMTRAIN_CHECK(!ec, dir.string(), ": cannot create the output directory: ", ec.message());
  TokenFileWriter writer(job.output, vocab_size, encoder.fingerprint());
  std::vector<TokenId> tokens;
  for (const LoadedBlock::Record& rec : block.records) {
    std::string_view text;
    std::string why;
    if (!extractor.extract(file.format, std::string_view(block.data).substr(rec.begin, rec.end - rec.begin),
                           job.dataset->field, text, why)) {
      bad(rec.offset, why);
      continue;
    }
    tokens.clear();
    encoder.encode(text, tokens);
    writer.add(tokens);
    ++r.documents;
    r.tokens += tokens.size();
  }
  writer.finish();
  r.files_written = 1;
  return r;
}

}  // namespace

PretokenizeReport pretokenize(const LoaderOptions& options, const DocumentEncoder& encoder, std::uint64_t vocab_size,
                              const std::string& output_dir, int threads, std::ostream& log) {
  LLMTRAIN_CHECK(threads >= 1, "pretokenize: threads must be >= 1, got ", threads);
  std::vector<DatasetFiles> datasets;
  for (const DatasetSpec& spec : options.datasets) datasets.push_back(list_dataset(spec));
  std::vector<Job> jobs;
  std::map<std::string, std::string> inputs;  // output -> input: two inputs must not share an output
  for (std::size_t d = 0; d < datasets.size(); ++d)
    for (std::size_t f = 0; f < datasets[d].files.size(); ++f) {
      const std::string& input = datasets[d].files[f].path;
      jobs.push_back({&datasets[d], f, output_path(options.datasets[d], input, output_dir)});
      auto [it, fresh] = inputs.emplace(jobs.back().output, input);
      LLMTRAIN_CHECK(fresh, "pretokenize: ", it->second, " and ", input, " would both be written to ", it->first);
    }

  PretokenizeReport total;
  std::mutex mutex;
  std::exception_ptr error;
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    TextExtractor extractor;
    for (std::size_t i = next++; i < jobs.size(); i = next++) {
      try {
        std::string why;
        std::error_code ec;
        const bool kept =
            fs::exists(jobs[i].output, ec) && verify_token_file(jobs[i].output, encoder.fingerprint(), why);
        PretokenizeReport r;
        if (kept) r.files_kept = 1;
        else r = convert(jobs[i], options, encoder, vocab_size, extractor);
        std::lock_guard<std::mutex> lock(mutex);
        total.files_written += r.files_written;
        total.files_kept += r.files_kept;
        total.documents += r.documents;
        total.tokens += r.tokens;
        total.bad_records += r.bad_records;
        log << "[" << total.files_written + total.files_kept << "/" << jobs.size() << "] " << jobs[i].output
            << (kept ? " (complete, kept)" : "") << "\n";
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!error) error = std::current_exception();
        next = jobs.size();  // the other threads stop after their current file
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  return total;
}

}  // namespace llmtrain::data
