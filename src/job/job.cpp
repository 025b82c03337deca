// The job: builds every part of a run in order and wires them together (see job.hpp).
#include "llmtrain/job/job.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "llmtrain/core/error.hpp"
#include "llmtrain/core/log.hpp"
#include "llmtrain/core/progress.hpp"
#include "llmtrain/data/tokenizer_encoder.hpp"
#include "llmtrain/dist/collectives.hpp"
#include "llmtrain/dist/gather_bytes.hpp"
#include "llmtrain/dist/spmd_main.hpp"
#include "llmtrain/job/options.hpp"
#include "llmtrain/job/provenance.hpp"
#include "llmtrain/model/gemm.hpp"
#include "llmtrain/parallel/memory_tracker.hpp"
#include "llmtrain/parallel/store_options.hpp"
#include "llmtrain/parallel/trace.hpp"
#include "llmtrain/train/hooks.hpp"
#include "memory_check.hpp"

namespace llmtrain::job {

// Members in build order: each is made from the ones above it, and they are destroyed in reverse.
struct Job::Parts {
  Config config;
  dist::Runtime& runtime;
  std::unique_ptr<dist::Collectives> comm;
  std::shared_ptr<const data::TokenizerEncoder> encoder;
  ModelConfig model_config;
  std::unique_ptr<data::Loader> train_loader, eval_loader;
  std::unique_ptr<parallel::Trace> trace;  // log.trace
  std::unique_ptr<parallel::ParamStore> store;
  std::optional<model::Model<float>> model;
  std::optional<optim::AdamW> optimizer;
  std::optional<train::Trainer> trainer;
  // Hooks, in the order the trainer runs them.
  train::StopAgreement stop_agreement;
  std::unique_ptr<ProvenanceLog> provenance;
  std::unique_ptr<train::MetricsLog> metrics_log;  // rank 0 with a run_dir
  std::optional<train::MetricsReport> metrics_report;
  std::optional<train::Evaluation> evaluation;

  Parts(const Config& c, dist::Runtime& r) : config(c), runtime(r) {}
};

Job::Job(const Config& config, dist::Runtime& runtime, double peak_flops)
    : parts_(std::make_unique<Parts>(config, runtime)) {
  Parts& p = *parts_;
  dist::agree(runtime, [&] {
    p.comm = dist::make_collectives(config.parallel.backend, runtime);
    p.encoder = std::make_shared<data::TokenizerEncoder>(tokenizer::Tokenizer::load(config.tokenizer.path));
    p.model_config = job::model_config(config, std::int64_t(p.encoder->tokenizer().vocab_size()));
  });
  // Before the first large allocation: a run that cannot fit is refused on every rank, with the numbers.
  dist::agree(runtime, [&] {
    const MemoryEstimate estimate = estimate_memory(config, p.model_config, runtime.size());
    check_memory(estimate.total(config.parallel.strategy), estimate,
                 available_memory(runtime.hostname(), runtime.local_size()), config.train.check_memory);
  });
  log_info("tensor collectives over ", p.comm->name());
  // Each rank streams its own logical shards; nothing is read before the first batch.
  dist::agree(runtime, [&] {
    const data::LoaderOptions train_options =
        loader_options(config, config.data.datasets, p.encoder->tokenizer(), runtime.local_size());
    if (!train_options.bos_id && !train_options.eos_id)
      log_warn("the tokenizer frames documents with no BOS or EOS token: documents are packed without separators "
               "(set tokenizer.eos_token)");
    p.train_loader = std::make_unique<data::Loader>(train_options, p.encoder, runtime.rank(), runtime.size());
    if (!config.data.eval_datasets.empty())
      p.eval_loader = std::make_unique<data::Loader>(
          loader_options(config, config.data.eval_datasets, p.encoder->tokenizer(), runtime.local_size()), p.encoder,
          runtime.rank(), runtime.size());
  });
  parallel::track_memory();
  dist::agree(runtime, [&] {
    p.store = parallel::make_store(p.model_config, store_options(config, runtime.size()), *p.comm);
  });
  log_info("parameters: ", p.store->strategy());
  if (config.log.trace) {
    p.trace = std::make_unique<parallel::Trace>(runtime.rank());
    p.store->set_trace(p.trace.get());
  }
  p.model.emplace(p.model_config, model::parse_recompute(config.train.recompute), *p.store);
  p.optimizer.emplace(p.store->param_shards(), adamw_options(config));
  if (peak_flops <= 0) peak_flops = model::measure_sgemm_peak();
  p.trainer.emplace(train_options(config, peak_flops), *p.model, *p.store, *p.optimizer, *p.comm);

  p.trainer->add_hook(p.stop_agreement);
  if (config.log.provenance) {
    const std::string path = config.train.run_dir + "/provenance.rank" + std::to_string(runtime.rank()) + ".jsonl";
    p.provenance = std::make_unique<ProvenanceLog>(*p.train_loader, path, runtime.rank());
    p.trainer->add_hook(*p.provenance);
  }
  if (runtime.rank() == 0) p.metrics_log = std::make_unique<train::MetricsLog>(config.train.run_dir);
  p.metrics_report.emplace(p.metrics_log.get(), config.log.every_steps);
  p.trainer->add_hook(*p.metrics_report);
  if (p.eval_loader) {
    p.evaluation.emplace(*p.eval_loader, config.train.eval_batches, config.train.eval_every, p.metrics_log.get());
    p.trainer->add_hook(*p.evaluation);
  }
}

Job::~Job() = default;

std::vector<train::StepMetrics> Job::run() {
  Parts& p = *parts_;
  parallel::ParamStore& store = *p.store;
  const ProgressScope polling([&store] { store.progress(); }, p.config.parallel.progress_us);
  // A restored trainer (a resume) continues its metrics file; a fresh one starts a new file.
  if (p.metrics_log) p.metrics_log->start(p.trainer->step());
  auto history = p.trainer->run(train_batches());
  if (p.trace) {
    const std::string path = p.config.train.run_dir + "/trace.rank" + std::to_string(p.runtime.rank()) + ".json";
    dist::agree(p.runtime, [&] {
      std::filesystem::create_directories(p.config.train.run_dir);
      p.trace->write(path);
    });
    log_info("trace: ", p.trace->events(), " events per rank in ", p.config.train.run_dir, "/trace.rank<R>.json");
  }
  return history;
}

train::Trainer& Job::trainer() { return *parts_->trainer; }

BatchSource& Job::train_batches() {
  Parts& p = *parts_;
  if (p.provenance) return *p.provenance;
  return *p.train_loader;
}

const ModelConfig& Job::model_config() const { return parts_->model_config; }

LoaderStates Job::loader_states() {
  Parts& p = *parts_;
  LoaderStates states;
  states.train = dist::all_gather_bytes(p.runtime, p.train_loader->state());
  if (p.eval_loader) states.eval = dist::all_gather_bytes(p.runtime, p.eval_loader->state());
  return states;
}

void Job::restore_loaders(const LoaderStates& states) {
  Parts& p = *parts_;
  dist::agree(p.runtime, [&] {
    p.train_loader->restore(states.train);
    if (p.eval_loader && !states.eval.empty()) p.eval_loader->restore(states.eval);
  });
}

std::map<std::string, std::uint64_t> Job::skipped_records() {
  Parts& p = *parts_;
  nlohmann::json mine = p.train_loader->stats().bad_records_by_file;
  if (p.eval_loader)
    for (const auto& [file, count] : p.eval_loader->stats().bad_records_by_file)
      mine[file] = mine.value(file, std::uint64_t(0)) + count;
  std::map<std::string, std::uint64_t> total;
  for (const std::string& blob : dist::all_gather_bytes(p.runtime, mine.dump())) {
    const nlohmann::json theirs = nlohmann::json::parse(blob);
    for (const auto& [file, count] : theirs.items()) total[file] += count.get<std::uint64_t>();
  }
  return total;
}

}  // namespace llmtrain::job
