// llmtrain-data: the data loader from the command line.
//
//   llmtrain-data simulate CONFIG --world-size W --steps N --batch B [--load-state DIR] [--save-state DIR]
//                                 [--provenance FILE.jsonl]
//   llmtrain-data state FILE          (prints a saved state in readable form)
//
// `simulate` runs W rank-loaders in one process on the [data] and [tokenizer] sections of the run's
// configuration, consumes N steps of B rows per rank, and writes the provenance of every row as JSON lines.
// Saving into DIR and loading it back with another W is the rescale path; the tests and users audit the
// exactly-once guarantees from these files.
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include "llmtrain/core/config.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/data/loader.hpp"
#include "llmtrain/data/simulate.hpp"
#include "llmtrain/data/tokenizer_encoder.hpp"

namespace {

using namespace llmtrain;

const char* const kUsage =
    "usage: llmtrain-data simulate CONFIG --world-size W --steps N --batch B [--load-state DIR]\n"
    "                              [--save-state DIR] [--provenance FILE.jsonl]\n"
    "       llmtrain-data state FILE\n";

// The loader's options from the run configuration's [data] section.
data::LoaderOptions loader_options(const Config& config) {
  data::LoaderOptions o;
  for (const DatasetConfig& d : config.data.datasets) o.datasets.push_back({d.name, d.path, d.weight, d.field});
  o.seq_len = config.data.seq_len;
  o.seed = static_cast<std::uint64_t>(config.data.seed);
  o.logical_shards = config.data.logical_shards;
  o.shuffle_window = config.data.shuffle_window;
  o.block_bytes = config.data.block_bytes;
  o.on_bad_record = config.data.on_bad_record == "fail" ? data::BadRecordPolicy::fail : data::BadRecordPolicy::skip;
  o.max_bad_fraction = config.data.max_bad_fraction;
  o.allow_corpus_change = config.data.allow_corpus_change;
  return o;
}

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

int simulate_command(int argc, char** argv) {
  std::string config_path;
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
    else if (a == "--save-state") sim.save_state_dir = value();
    else if (a == "--provenance") sim.provenance_path = value();
    else if (!a.empty() && a[0] == '-') LLMTRAIN_FAIL("unknown option '", a, "'\n", kUsage);
    else {
      LLMTRAIN_CHECK(config_path.empty(), "more than one configuration file given\n", kUsage);
      config_path = a;
    }
  }
  LLMTRAIN_CHECK(!config_path.empty(), "no configuration file given\n", kUsage);
  LLMTRAIN_CHECK(world && steps && batch, "--world-size, --steps and --batch are required\n", kUsage);
  Config config = load_config(config_path);
  tokenizer::Tokenizer tok = tokenizer::Tokenizer::load(config.tokenizer.path);
  data::LoaderOptions options = loader_options(config);
  data::set_default_special_tokens(tok, options);
  data::simulate(options, std::make_shared<data::TokenizerEncoder>(tok), sim, std::cerr);
  return 0;
}

int state_command(int argc, char** argv) {
  LLMTRAIN_CHECK(argc == 3, "state: expected one state file\n", kUsage);
  std::ifstream in(argv[2], std::ios::binary);
  LLMTRAIN_CHECK(in.good(), argv[2], ": cannot open");
  std::string blob((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::cout << data::describe_state(blob);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string command = argc > 1 ? argv[1] : "";
    if (command == "simulate") return simulate_command(argc, argv);
    if (command == "state") return state_command(argc, argv);
    if (command == "--help" || command == "-h") {
      std::cout << kUsage;
      return 0;
    }
    LLMTRAIN_FAIL(command.empty() ? "no command given" : "unknown command '" + command + "'", "\n", kUsage);
  } catch (const llmtrain::Error& e) {
    std::cerr << "llmtrain-data: " << e.what() << "\n";
    return 1;
  }
}
