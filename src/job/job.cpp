// The job: builds every part of a run in order and wires them together (see job.hpp).
#include "llmtrain/job/job.hpp"

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
#include "llmtrain/parallel/replicated_store.hpp"
#include "llmtrain/train/hooks.hpp"

namespace llmtrain::job {

// Members in build order: each is made from the ones above it, and they are destroyed in reverse.
struct Job::Parts {
  Config config;
  dist::Runtime& runtime;
  std::unique_ptr<dist::Collectives> comm;
  std::shared_ptr<const data::TokenizerEncoder> encoder;
  ModelConfig model_config;
  std::unique_ptr<data::Loader> train_loader, eval_loader;
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
  p.store = std::make_unique<parallel::ReplicatedStore>(p.model_config, *p.comm);
  const model::Precision precision = products_precision(config);
  p.model.emplace(p.model_config, model::parse_recompute(config.train.recompute), *p.store, precision);
  p.optimizer.emplace(p.store->param_shards(), adamw_options(config));
  if (peak_flops <= 0) peak_flops = model::measure_gemm_peak(precision);
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
  dist::Collectives& comm = *p.comm;
  const ProgressScope polling([&comm] { comm.progress(); }, p.config.parallel.progress_us);
  return p.trainer->run(train_batches());
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

}  // namespace llmtrain::job
