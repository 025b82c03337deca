// llmtrain-data: the data loader from the command line.
//
//   llmtrain-data simulate CONFIG --world-size W --steps N --batch B [--load-state DIR] [--save-state DIR]
//                                 [--provenance FILE.jsonl] [--audit] [--metadata-only]
//   llmtrain-data bench CONFIG [--steps N] [--batch B] [--world-size W] [--prefetch ROWS]
//   llmtrain-data inspect CONFIG [--rows N] [--world-size W] [--sample-blocks K]
//   llmtrain-data state FILE          (prints a saved state in readable form)
//
// `simulate` runs W rank-loaders in one process on the [data] and [tokenizer] sections of the run's
// configuration, consumes N steps of B rows per rank, and writes the provenance of every row as JSON lines.
// Saving into DIR and loading it back with another W is the rescale path; the tests and users audit the
// exactly-once guarantees from these files. `bench` measures rank 0 of W and ends with one JSON line of figures.
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <utility>

#include "llmtrain/config/config.hpp"
#include "llmtrain/core/counted.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/core/timer.hpp"
#include "llmtrain/data/inspect.hpp"
#include "llmtrain/job/options.hpp"
#include "llmtrain/data/loader.hpp"
#include "llmtrain/data/pretokenize.hpp"
#include "llmtrain/data/simulate.hpp"
#include "llmtrain/data/tokenizer_encoder.hpp"

namespace {

using namespace llmtrain;

const char* const kUsage =
    "usage: llmtrain-data simulate CONFIG --world-size W --steps N --batch B [--load-state DIR]\n"
    "                              [--save-state DIR] [--provenance FILE.jsonl] [--audit]\n"
    "                              [--metadata-only]   (pre-tokenized datasets: spans only, no tokens)\n"
    "                              [--prefetch ROWS]\n"
    "       llmtrain-data bench CONFIG [--steps N] [--batch B] [--world-size W] [--prefetch ROWS]\n"
    "                              [--threads T] [--work-us US]\n"
    "       llmtrain-data inspect CONFIG [--rows N] [--world-size W] [--sample-blocks K]\n"
    "       llmtrain-data state FILE\n"
    "       llmtrain-data pretokenize CONFIG --output DIR [--threads T]\n"
    "commands that read CONFIG also take --set section.key=value (repeatable), as llmtrain does:\n"
    "       --set data.seq_len=256 --set data.datasets.web.path=corpus/web   (see llmtrain --help)\n";

const char* const kHelp =
    "llmtrain-data: the data loader of a run configuration (its [data] and [tokenizer] sections), without training.\n"
    "\n"
    "simulate CONFIG --world-size W --steps N --batch B [options]\n"
    "    Runs W rank-loaders in this process for N steps of B rows each, as W training ranks would.\n"
    "    --world-size W         ranks to simulate (any W <= data.logical_shards)\n"
    "    --steps N              steps to run (0: only load and save the state)\n"
    "    --batch B              rows per rank and step\n"
    "    --load-state DIR       resume from the rank-*.state files of an earlier run (any world size)\n"
    "    --save-state DIR       write one rank-RRRRR.state per rank at the end\n"
    "    --provenance FILE      write where every row came from, one JSON line per row\n"
    "    --audit                check dataset shares and exactly-once delivery (also of a resumed run)\n"
    "    --metadata-only        pre-tokenized datasets only: pack from lengths, copy no token (fast audits)\n"
    "    --prefetch ROWS        each rank's loader prepares batches in a thread of its own, ROWS ahead, so\n"
    "                           that the audit and the states cover the hand-off (default 0: synchronous)\n"
    "    example: llmtrain-data simulate run.toml --world-size 4 --steps 100 --batch 8 --save-state st\n"
    "             llmtrain-data simulate run.toml --world-size 6 --steps 100 --batch 8 --load-state st --audit\n"
    "\n"
    "bench CONFIG [options]   throughput of rank 0 of W; one JSON line of figures on stdout\n"
    "    --steps N              steps to time (default 50)\n"
    "    --batch B              rows per step (default 8)\n"
    "    --world-size W         rank 0 of W reads 1/W of the corpus (default 1)\n"
    "    --prefetch ROWS        rows a background thread prepares ahead (default: data.prefetch_rows)\n"
    "    --threads T            tokenizing threads (default: data.threads)\n"
    "    --work-us US           after each batch the caller works (spins) US microseconds, as a trainer\n"
    "                           computes on it: what a prefetch thread can overlap (default 0)\n"
    "    example: llmtrain-data bench run.toml --steps 200 --batch 8 --threads 4\n"
    "\n"
    "inspect CONFIG [options]   files, bytes, estimated documents and tokens per dataset, and first rows\n"
    "    --rows N               rows of rank 0 to print decoded (default 2; 0: none)\n"
    "    --world-size W         whose rank 0 (default 1)\n"
    "    --sample-blocks K      blocks read per dataset for the estimates (default 16)\n"
    "    example: llmtrain-data inspect run.toml --rows 1\n"
    "\n"
    "state FILE   prints a saved data loader state (rank-RRRRR.state) in readable form\n"
    "    example: llmtrain-data state st/rank-00000.state\n"
    "\n"
    "pretokenize CONFIG --output DIR [--threads T]\n"
    "    Writes DIR/<dataset>/<file>.ltok for every raw-text file; complete outputs are kept (resumable).\n"
    "    --output DIR           where to write\n"
    "    --threads T            files converted at once (default: data.threads)\n"
    "    example: llmtrain-data pretokenize run.toml --output /scratch/tokens --threads 8\n"
    "\n"
    "simulate, bench, inspect and pretokenize also take --set section.key=value (repeatable), as llmtrain does:\n"
    "    example: llmtrain-data inspect run.toml --set data.seq_len=256 --set data.datasets.web.weight=2\n"
    "\n"
    "Errors print one line 'llmtrain-data: reason' on stderr and exit 1; simulate --audit exits 2 on a violation.\n";

long long to_int(const std::string& option, const std::string& value) {
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  LLMTRAIN_CHECK(used == value.size() && !value.empty(), option, ": expected an integer, got '", value, "'\n",
                 kUsage);
  return v;
}

double cpu_seconds() {  // user + system time of the process, all threads
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

// The tokenizer and the training loader's options of a run configuration, as the llmtrain job builds them.
std::pair<tokenizer::Tokenizer, data::LoaderOptions> load_training_data(const std::string& config_path,
                                                                        const std::vector<std::string>& overrides) {
  const Config config = load_config(config_path, overrides);
  tokenizer::Tokenizer tok = job::load_tokenizer(config);
  data::LoaderOptions options = job::loader_options(config, config.data.datasets, tok);
  return {std::move(tok), std::move(options)};
}

int simulate_command(int argc, char** argv) {
  std::string config_path;
  std::vector<std::string> overrides;
  data::SimulateOptions sim;
  bool world = false, steps = false, batch = false;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      LLMTRAIN_CHECK(i + 1 < argc, "option ", a, " needs a value\n", kUsage);
      return argv[++i];
    };
    if (a == "--world-size") sim.world_size = static_cast<int>(to_int(a, value())), world = true;
    else if (a == "--steps") sim.steps = to_int(a, value()), steps = true;
    else if (a == "--batch") sim.batch_rows = to_int(a, value()), batch = true;
    else if (a == "--load-state") sim.load_state_dir = value();
    else if (a == "--audit") sim.audit = true;
    else if (a == "--metadata-only") sim.metadata_only = true;
    else if (a == "--prefetch") sim.prefetch_rows = to_int(a, value());
    else if (a == "--save-state") sim.save_state_dir = value();
    else if (a == "--provenance") sim.provenance_path = value();
    else if (a == "--set") overrides.push_back(value());
    else if (!a.empty() && a[0] == '-') LLMTRAIN_FAIL("unknown option '", a, "'\n", kUsage);
    else {
      LLMTRAIN_CHECK(config_path.empty(), "more than one configuration file given\n", kUsage);
      config_path = a;
    }
  }
  LLMTRAIN_CHECK(!config_path.empty(), "no configuration file given\n", kUsage);
  LLMTRAIN_CHECK(world && steps && batch, "--world-size, --steps and --batch are required\n", kUsage);
  auto [tok, options] = load_training_data(config_path, overrides);
  options.threads = 1;  // W loaders share this process: no thread per loader (the output is the same)
  const Stopwatch watch;
  const std::uint64_t violations =
      data::simulate(options, std::make_shared<data::TokenizerEncoder>(tok), sim, std::cerr);
  std::cerr << "simulated " << counted(sim.world_size, "rank") << " x " << counted(sim.steps, "step") << " in "
            << watch.seconds()
            << " s (" << cpu_seconds() << " s CPU)\n";
  return violations == 0 ? 0 : 2;
}

// Rank 0 of W on the configured corpus: time to first batch, steady throughput, state size, save and restore
// time (restore reads rank 0's state and fresh states of the other ranks), peak memory of the process.
int bench_command(int argc, char** argv) {
  std::string config_path;
  std::vector<std::string> overrides;
  long long steps = 50, batch = 8, world = 1, prefetch = -1, threads = -1;  // -1: as configured
  long long work_us = 0;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      LLMTRAIN_CHECK(i + 1 < argc, "option ", a, " needs a value\n", kUsage);
      return argv[++i];
    };
    if (a == "--steps") steps = to_int(a, value());
    else if (a == "--batch") batch = to_int(a, value());
    else if (a == "--world-size") world = to_int(a, value());
    else if (a == "--prefetch") prefetch = to_int(a, value());
    else if (a == "--threads") threads = to_int(a, value());
    else if (a == "--work-us") work_us = to_int(a, value());
    else if (a == "--set") overrides.push_back(value());
    else if (!a.empty() && a[0] == '-') LLMTRAIN_FAIL("unknown option '", a, "'\n", kUsage);
    else config_path = a;
  }
  LLMTRAIN_CHECK(!config_path.empty(), "no configuration file given\n", kUsage);
  LLMTRAIN_CHECK(steps >= 1 && batch >= 1 && world >= 1 && prefetch >= -1 && threads >= -1 && threads != 0 &&
                     work_us >= 0,
                 "bench: --steps, --batch, --world-size and --threads must be >= 1, --prefetch and --work-us >= 0\n",
                 kUsage);
  auto [tok, options] = load_training_data(config_path, overrides);
  options.batch_rows = batch;
  if (prefetch >= 0) options.prefetch_rows = prefetch;
  if (threads >= 1) options.threads = threads;
  auto encoder = std::make_shared<data::TokenizerEncoder>(tok);
  const int w = static_cast<int>(world);

  Stopwatch watch;
  data::Loader loader(options, encoder, 0, w);
  Batch taken;
  loader.next_into(taken);
  const double first_batch_s = watch.seconds();
  std::int64_t tokens = 0;
  watch.restart();
  const double cpu_start = cpu_seconds();
  for (long long s = 0; s < steps; ++s) {  // as the trainer takes batches: into the storage of the last one
    loader.next_into(taken);
    tokens += static_cast<std::int64_t>(taken.tokens.size());
    if (work_us > 0) {  // the caller's own work on the batch: a spin, as compute would keep its core busy
      const Stopwatch working;
      while (working.seconds() * 1e6 < double(work_us)) continue;
    }
  }
  const double run_s = watch.seconds(), run_cpu_s = cpu_seconds() - cpu_start;

  watch.restart();
  std::vector<std::string> states = {loader.state()};
  const double save_ms = 1e3 * watch.seconds();
  for (int r = 1; r < w; ++r) states.push_back(data::Loader(options, encoder, r, w).state());
  watch.restart();
  data::Loader resumed(options, encoder, 0, w);
  const double startup_ms = 1e3 * watch.seconds();  // listing the corpus: grows with the file count
  watch.restart();
  resumed.restore(states);
  const double restore_ms = 1e3 * watch.seconds();

  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  const double tokens_per_s = static_cast<double>(tokens) / run_s;
  // Per core = per CPU second of the whole process (all its threads): honest on a shared machine too.
  const double per_core = static_cast<double>(tokens) / std::max(run_cpu_s, 1e-9);
  std::cout << "{\"tokens_per_s\":" << tokens_per_s << ",\"tokens_per_s_per_core\":" << per_core
            << ",\"time_to_first_batch_s\":" << first_batch_s << ",\"peak_rss_mb\":" << usage.ru_maxrss / 1024.0
            << ",\"state_bytes\":" << states[0].size() << ",\"state_save_ms\":" << save_ms
            << ",\"state_restore_ms\":" << restore_ms << ",\"startup_ms\":" << startup_ms << ",\"world_size\":" << w
            << ",\"batch\":" << batch
            << ",\"seq_len\":" << options.seq_len << ",\"steps\":" << steps << ",\"threads\":" << options.threads
            << ",\"prefetch_rows\":" << options.prefetch_rows << ",\"work_us\":" << work_us << ",\"run_s\":" << run_s
            << ",\"run_cpu_s\":" << run_cpu_s << ",\"batches_made_inline\":" << loader.stats().batches_made_inline
            << ",\"skipped_records\":" << loader.stats().skipped_records() << "}\n";
  return 0;
}

// Per-dataset files and bytes, sampled estimates of documents and tokens, and the first rows rank 0 of W would
// receive, decoded.
int inspect_command(int argc, char** argv) {
  std::string config_path;
  std::vector<std::string> overrides;
  long long rows = 2, world = 1, sample_blocks = 16;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      LLMTRAIN_CHECK(i + 1 < argc, "option ", a, " needs a value\n", kUsage);
      return argv[++i];
    };
    if (a == "--rows") rows = to_int(a, value());
    else if (a == "--world-size") world = to_int(a, value());
    else if (a == "--sample-blocks") sample_blocks = to_int(a, value());
    else if (a == "--set") overrides.push_back(value());
    else if (!a.empty() && a[0] == '-') LLMTRAIN_FAIL("unknown option '", a, "'\n", kUsage);
    else config_path = a;
  }
  LLMTRAIN_CHECK(!config_path.empty(), "no configuration file given\n", kUsage);
  LLMTRAIN_CHECK(rows >= 0 && world >= 1 && sample_blocks >= 1, "inspect: --rows must be >= 0, --world-size and "
                 "--sample-blocks >= 1\n", kUsage);
  auto [tok, options] = load_training_data(config_path, overrides);
  data::TokenizerEncoder encoder(tok);
  std::cerr << "sampling " << sample_blocks << " blocks per dataset...\n";
  for (const data::DatasetSummary& s : data::summarize_corpus(options, encoder, static_cast<int>(sample_blocks))) {
    std::cout << "dataset '" << s.name << "': " << counted(s.files, "file") << " (" << s.empty_files << " empty), "
              << s.bytes << " bytes; estimate from " << counted(s.sampled_records, "record") << " in "
              << counted(s.sampled_blocks, "sampled block") << " (" << s.sampled_bad << " bad): ~" << static_cast<std::uint64_t>(s.estimated_documents)
              << " documents, ~" << static_cast<std::uint64_t>(s.estimated_tokens) << " tokens\n";
  }
  if (rows == 0) return 0;
  options.batch_rows = rows;
  options.prefetch_rows = 0;
  data::Loader loader(options, std::make_shared<data::TokenizerEncoder>(tok), 0, static_cast<int>(world));
  Batch batch = loader.next();
  for (long long r = 0; r < rows; ++r) {
    const auto& p = loader.last_provenance()[static_cast<std::size_t>(r)];
    std::cout << "\nrow " << r << " of rank 0 of " << world << " (" << p.spans.size() << " pieces, first from "
              << p.spans.front().file << " @" << p.spans.front().byte_offset << "):\n"
              << tok.decode(batch.row(r), static_cast<std::size_t>(batch.row_width())) << "\n";
  }
  return 0;
}

// Every raw-text file of the configured datasets -> DIR/<dataset>/<file>.ltok, skipping complete outputs.
int pretokenize_command(int argc, char** argv) {
  std::string config_path, output;
  std::vector<std::string> overrides;
  long long threads = 0;  // 0: as configured (data.threads)
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      LLMTRAIN_CHECK(i + 1 < argc, "option ", a, " needs a value\n", kUsage);
      return argv[++i];
    };
    if (a == "--output") output = value();
    else if (a == "--threads") threads = to_int(a, value());
    else if (a == "--set") overrides.push_back(value());
    else if (!a.empty() && a[0] == '-') LLMTRAIN_FAIL("unknown option '", a, "'\n", kUsage);
    else config_path = a;
  }
  LLMTRAIN_CHECK(!config_path.empty() && !output.empty(), "pretokenize: CONFIG and --output DIR are required\n",
                 kUsage);
  LLMTRAIN_CHECK(threads >= 0, "pretokenize: --threads must be >= 1\n", kUsage);
  auto [tok, options] = load_training_data(config_path, overrides);
  const Stopwatch watch;
  data::PretokenizeReport r = data::pretokenize(options, data::TokenizerEncoder(tok), tok.vocab_size(), output,
                                                static_cast<int>(threads > 0 ? threads : options.threads), std::cerr);
  std::cout << "wrote " << counted(r.files_written, "file") << " (" << counted(r.documents, "document") << ", "
            << counted(r.tokens, "token") << ", " << counted(r.bad_records, "bad record") << " skipped), kept "
            << counted(r.files_kept, "complete file") << ", in " << watch.seconds() << " s\n";
  return 0;
}

int state_command(int argc, char** argv) {
  LLMTRAIN_CHECK(argc == 3, "state: expected one state file\n", kUsage);
  try {
    std::cout << data::describe_state(data::read_state_file(argv[2]));
  } catch (const Error& e) {
    const std::string why = e.what();
    if (why.rfind(argv[2], 0) == 0) throw;  // already names the file
    LLMTRAIN_FAIL(argv[2], ": ", why);
  }
  return 0;
}

int run_command(int argc, char** argv) {
  const std::string command = argc > 1 ? argv[1] : "";
  if (command == "simulate") return simulate_command(argc, argv);
  if (command == "bench") return bench_command(argc, argv);
  if (command == "inspect") return inspect_command(argc, argv);
  if (command == "state") return state_command(argc, argv);
  if (command == "pretokenize") return pretokenize_command(argc, argv);
  if (command == "--help" || command == "-h" || command == "help") {
    std::cout << kUsage << "\n" << kHelp;
    return 0;
  }
  LLMTRAIN_FAIL(command.empty() ? "no command given" : "unknown command '" + command + "'", "\n", kUsage);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const int status = run_command(argc, argv);
    std::cout.flush();  // a full disk or a closed pipe behind stdout is an error, not a silent exit status
    LLMTRAIN_CHECK(std::cout.good(), "<stdout>: write failed: ", std::strerror(errno));
    return status;
  } catch (const llmtrain::Error& e) {
    std::cerr << "llmtrain-data: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {  // a library's own error (filesystem, allocation): still a message, exit 1
    std::cerr << "llmtrain-data: " << e.what() << "\n";
    return 1;
  }
}
