// The job: builds every part of a run in order and wires them together (see job.hpp).
#include "llmtrain/job/job.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "checkpoint_hook.hpp"
#include "device_choice.hpp"
#include "host_copies.hpp"
#include "llmtrain/ckpt/background_writer.hpp"
#include "llmtrain/ckpt/checkpoint.hpp"
#include "llmtrain/ckpt/directory.hpp"
#include "llmtrain/ckpt/memory_tier.hpp"
#include "llmtrain/core/comm_progress.hpp"
#include "llmtrain/core/counted.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/core/log.hpp"
#include "llmtrain/core/timer.hpp"
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
#include "llmtrain/train/device_peak.hpp"
#include "llmtrain/train/hooks.hpp"
#include "memory_check.hpp"
#include "memory_dir.hpp"
#include "relaunch.hpp"
#include "resume.hpp"
#include "storage_check.hpp"

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
  std::unique_ptr<model::Backend<float>> backend;  // train.device = cuda: its memory holds the store's units
  std::unique_ptr<parallel::ParamStore> store;
  std::optional<model::Model<float>> model;
  std::optional<optim::AdamW> optimizer;
  std::optional<HostCopies> host_copies;  // what checkpoints write and read
  std::optional<train::Trainer> trainer;
  std::unique_ptr<ckpt::BackgroundWriter> checkpoint_writer;  // checkpoint.async
  std::unique_ptr<ckpt::MemoryTier> memory_tier;               // checkpoint.memory_every_steps
  // Hooks, in the order the trainer runs them.
  train::StopAgreement stop_agreement;
  std::unique_ptr<ProvenanceLog> provenance;
  std::unique_ptr<CheckpointHook> checkpoints;  // with a checkpoint.dir; before the metrics, which report its cost
  std::unique_ptr<train::MetricsLog> metrics_log;  // rank 0 with a run_dir
  std::optional<train::MetricsReport> metrics_report;
  std::optional<train::Evaluation> evaluation;
  std::optional<train::TextSample> text_sample;
  std::string resumed_from;                     // the checkpoint file this run continued from, if any

  Parts(const Config& c, dist::Runtime& r) : config(c), runtime(r) {}
};

Job::Job(const Config& config, dist::Runtime& runtime, double peak_flops)
    : parts_(std::make_unique<Parts>(config, runtime)) {
  Parts& p = *parts_;
  // train.device first: where the tensors live decides the collectives ("auto": NCCL on devices, MPI on the
  // host) and which memory the check below compares with.
  const ChosenDevice device = choose_device(config, runtime);
  const bool on_device = device.choice.device == Device::cuda;
  dist::agree(runtime, [&] {
    p.comm = dist::make_collectives(config.parallel.backend, runtime, device.choice.tensors(),
                                    config.parallel.collective_timeout_s);
    p.encoder = std::make_shared<data::TokenizerEncoder>(load_tokenizer(config));
    p.model_config = job::model_config(config, std::int64_t(p.encoder->tokenizer().vocab_size()));
  });
  // Before the first large allocation: a run that cannot fit is refused on every rank, with the numbers.
  dist::agree(runtime, [&] {
    check_memory(config, p.model_config, runtime.size(),
                 on_device ? device_available_memory(device.seen, runtime.hostname())
                           : available_memory(runtime.hostname(), runtime.local_size()));
  });
  // Before any work: directories that cannot be written, or a checkpoint that would not fit, stop the run
  // here rather than at its first checkpoint write (with checkpoint.every_steps = 0, after the training).
  check_run_directories(config, p.model_config, runtime);
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
    // On the device devices_seen selected (cudaSetDevice): the model's operations, the units and the moments.
    if (on_device) p.backend = model::make_backend<float>(model::Device::Cuda);
    p.store = parallel::make_store(p.model_config, store_options(config, runtime.size()), *p.comm, p.backend.get());
  });
  log_info("parameters: ", p.store->strategy());
  if (config.log.trace) {
    p.trace = std::make_unique<parallel::Trace>(runtime.rank());
    p.store->set_trace(p.trace.get());
  }
  const model::Precision precision = products_precision(config, on_device ? model::Device::Cuda : model::Device::Cpu);
  if (p.backend)
    p.model.emplace(p.model_config, model::parse_recompute(config.train.recompute), *p.store, *p.backend, precision);
  else
    p.model.emplace(p.model_config, model::parse_recompute(config.train.recompute), *p.store, precision);
  p.optimizer.emplace(p.store->param_shards(), adamw_options(config), p.backend.get());
  p.host_copies.emplace(*p.store, *p.optimizer, p.backend.get());
  // MFU's denominator: a device's datasheet bf16 peak where the table knows it, else a measured one.
  if (peak_flops <= 0 && on_device)
    peak_flops = train::peak_for_device(device.seen.name, device.seen.cc_major, device.seen.cc_minor);
  if (peak_flops <= 0) peak_flops = model::measure_gemm_peak(precision);
  p.trainer.emplace(train_options(config, peak_flops), *p.model, *p.store, *p.optimizer, *p.comm);
  start_memory_tier();
  dist::agree(runtime, [&] {
    resume();
    if (p.resumed_from.empty() && !config.checkpoint.init_from.empty()) initialize_from(config.checkpoint.init_from);
  });

  p.trainer->add_hook(p.stop_agreement);
  if (config.log.provenance) {
    const std::string path = config.train.run_dir + "/provenance.rank" + std::to_string(runtime.rank()) + ".jsonl";
    p.provenance = std::make_unique<ProvenanceLog>(*p.train_loader, path, runtime.rank());
    p.trainer->add_hook(*p.provenance);
  }
  if (!config.checkpoint.dir.empty()) {
    if (config.checkpoint.async && runtime.thread_multiple())
      p.checkpoint_writer = std::make_unique<ckpt::BackgroundWriter>(runtime.comm());
    else if (config.checkpoint.async)
      log_warn("checkpoint.async = true needs MPI_THREAD_MULTIPLE, which this MPI library does not provide: "
               "checkpoints are written synchronously");
    CheckpointWrites writes;
    writes.save = [this] {
      train::CheckpointCost cost;
      save_checkpoint(&cost);
      return cost;
    };
    writes.settle = [this](bool wait) { return settle_checkpoint(wait); };
    if (p.memory_tier) {
      writes.snapshot = [this] {
        const auto started = parts_->memory_tier->snapshot(checkpoint_contents(false));
        return train::CheckpointCost{started.blocked_s, started.snapshot_s};
      };
      // A run that reached its steps and saved its final checkpoint needs no memory snapshot; a failure keeps them.
      writes.finished = [this](train::Trainer& trainer) {
        if (!trainer.stopped_by_signal() && trainer.step() >= parts_->config.train.steps) parts_->memory_tier->remove_all();
      };
    }
    p.checkpoints = std::make_unique<CheckpointHook>(std::move(writes), config.checkpoint.every_steps,
                                                     config.checkpoint.memory_every_steps, config.checkpoint.on_stop,
                                                     p.trainer->step());
    p.trainer->add_hook(*p.checkpoints);
  }
  if (runtime.rank() == 0) p.metrics_log = std::make_unique<train::MetricsLog>(config.train.run_dir);
  p.metrics_report.emplace(p.metrics_log.get(), config.log.every_steps, p.checkpoints ? &p.checkpoints->cost() : nullptr);
  std::optional<Relaunch> relaunch;
  dist::agree(runtime, [&] { relaunch = parse_relaunch(std::getenv("LLMTRAIN_RECOVERY")); });
  if (relaunch)
    p.metrics_report->set_recovery(std::max<std::int64_t>(0, relaunch->last_step - p.trainer->step()),
                                   relaunch->failed_at_unix_s);
  p.trainer->add_hook(*p.metrics_report);
  if (p.eval_loader) {
    p.evaluation.emplace(*p.eval_loader, config.train.eval_batches, config.train.eval_every, p.metrics_log.get());
    p.trainer->add_hook(*p.evaluation);
  }
  if (config.train.sample_every > 0) {
    // Framed as a document starts; an empty prompt is the document separator alone, as llm.c samples.
    const tokenizer::Tokenizer& tok = p.encoder->tokenizer();
    const DocumentFraming framing = document_framing(config, tok);
    std::vector<TokenId> prompt;
    if (framing.bos_id) prompt.push_back(*framing.bos_id);
    tok.encode(config.train.sample_prompt, prompt);
    if (prompt.empty() && framing.eos_id) prompt.push_back(*framing.eos_id);
    dist::agree(runtime, [&] {
      LLMTRAIN_CHECK(!prompt.empty() && std::int64_t(prompt.size()) < p.model_config.max_seq_len, config.source_file,
                     ": train.sample_prompt: ", prompt.size(), " tokens; a sample needs at least 1 (the tokenizer ",
                     "frames documents with no BOS or EOS) and fewer than data.seq_len = ", p.model_config.max_seq_len);
    });
    p.text_sample.emplace(prompt, config.train.sample_every, config.train.sample_tokens, std::int64_t(tok.vocab_size()),
                          framing.eos_id,
                          [&tok](const std::vector<TokenId>& ids) { return tokenizer::to_valid_utf8(tok.decode(ids)); },
                          runtime.rank() == 0);
    p.trainer->add_hook(*p.text_sample);
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

std::vector<std::string> Job::loader_states() {
  Parts& p = *parts_;
  return dist::all_gather_bytes(p.runtime, p.train_loader->state());
}

void Job::restore_loader(const std::vector<std::string>& states) {
  Parts& p = *parts_;
  dist::agree(p.runtime, [&] { p.train_loader->restore(states); });
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

namespace llmtrain::job {

namespace {

// After a checkpoint file is complete: rank 0 points LATEST at it and applies keep_last / keep_every.
void update_checkpoint_dir(const CheckpointConfig& c, const std::string& path, int rank) {
  if (rank != 0) return;
  ckpt::write_latest(c.dir, path);
  for (const auto& removed : ckpt::prune(c.dir, c.keep_last, c.keep_every))
    log_info("removed ", removed, " (checkpoint.keep_last = ", c.keep_last, ", keep_every = ", c.keep_every, ")");
}

void log_written(const std::string& path, std::uint64_t bytes, double seconds, const char* how) {
  log_info("checkpoint ", path, ": ", bytes, " bytes in ", seconds, " s (", double(bytes) / seconds / 1e6, " MB/s", how, ")");
}

}  // namespace

ckpt::Contents Job::checkpoint_contents(bool every_loader) {
  Parts& p = *parts_;
  const Config& c = p.config;
  ckpt::Contents contents;
  ckpt::Metadata& m = contents.metadata;
  m.step = p.trainer->step();
  m.tokens_seen = p.trainer->tokens_seen();
  m.world_size = p.runtime.size();
  m.strategy = p.store->strategy();
  m.config = to_toml(c);
  for (const auto& d : c.data.datasets) m.corpus += d.name + "=" + d.path + "\n";
  m.tokenizer_fingerprint = p.encoder->fingerprint();
  m.code_version = LLMTRAIN_VERSION;
  const HostCopies::Units units = p.host_copies->current();
  contents.params = units.params;
  contents.first_moments = units.first_moments;
  contents.second_moments = units.second_moments;
  contents.optimizer_step = p.optimizer->steps_taken();
  contents.train_loader = every_loader ? loader_states() : std::vector<std::string>{p.train_loader->state()};
  contents.rng = {std::uint64_t(c.model.seed), std::uint64_t(c.data.seed)};
  return contents;
}

std::string Job::save_checkpoint(train::CheckpointCost* cost) {
  Parts& p = *parts_;
  const Config& c = p.config;
  LLMTRAIN_CHECK(!c.checkpoint.dir.empty(), "save_checkpoint: checkpoint.dir is not set");
  const Stopwatch watch;
  // One write in flight: a snapshot waits for the previous write, and its failure ends the job here.
  const double waited = p.checkpoint_writer ? p.checkpoint_writer->wait() : 0.0;
  if (p.checkpoint_writer) dist::agree(p.runtime, [&] { p.checkpoint_writer->rethrow_failure(); });
  const ckpt::Contents contents = checkpoint_contents(true);
  const ckpt::Metadata& m = contents.metadata;
  const std::string path = ckpt::checkpoint_path(c.checkpoint.dir, m.step);
  const ckpt::WriteOptions options{c.checkpoint.alignment, c.checkpoint.file_locking, c.checkpoint.timeout_s};
  if (p.checkpoint_writer) {
    // On the writer thread once the file is complete; a failure there is rethrown by the next agreement.
    auto after_write = [checkpoint = c.checkpoint, path, rank = p.runtime.rank()](std::uint64_t bytes, double seconds) {
      update_checkpoint_dir(checkpoint, path, rank);
      log_written(path, bytes, seconds, ", in the background");
    };
    const auto started = p.checkpoint_writer->start(path, contents, options, std::move(after_write));
    if (cost) *cost = {waited + started.blocked_s, started.snapshot_s};
    return path;
  }
  const std::uint64_t bytes = ckpt::write_checkpoint(path, contents, p.runtime.comm(), options);
  dist::agree(p.runtime, [&] { update_checkpoint_dir(c.checkpoint, path, p.runtime.rank()); });
  log_written(path, bytes, watch.seconds(), "");
  if (cost) *cost = {watch.seconds(), 0.0};
  return path;
}

bool Job::settle_checkpoint(bool wait) {
  Parts& p = *parts_;
  if (!p.checkpoint_writer) return false;
  if (wait) p.checkpoint_writer->wait();
  // Busy anywhere first, then the failures: once no rank is busy, every rank's outcome is in.
  int busy = p.checkpoint_writer->busy() ? 1 : 0;
  LLMTRAIN_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &busy, 1, MPI_INT, MPI_MAX, p.runtime.comm()));
  dist::agree(p.runtime, [&] { p.checkpoint_writer->rethrow_failure(); });
  return busy != 0;
}

void Job::restore_checkpoint(const std::string& path) {
  Parts& p = *parts_;
  ckpt::Reader reader(path, p.runtime.comm());
  const ckpt::Metadata& m = reader.metadata();
  check_resumable(path, m);
  const HostCopies::Units units = p.host_copies->to_fill();
  reader.read_units("model", *units.params, "");
  reader.read_units("optim", *units.first_moments, "m");
  reader.read_units("optim", *units.second_moments, "v");
  p.host_copies->loaded(true);
  p.optimizer->restore_steps_taken(reader.optimizer_step());
  continue_from(path, m, reader.loader_states());
  log_info("resumed from ", path, " at step ", m.step, " (saved by ", counted(m.world_size, "rank"), ", ", m.strategy, ", ",
           m.tokens_seen, " tokens seen)");
  warn_batch_change(m);
}

void Job::check_resumable(const std::string& what, const ckpt::Metadata& m) {
  Parts& p = *parts_;
  LLMTRAIN_CHECK(m.tokenizer_fingerprint == p.encoder->fingerprint(), what,
                 ": written with another tokenizer (fingerprint ", m.tokenizer_fingerprint, "; ", p.config.tokenizer.path,
                 " has ", p.encoder->fingerprint(), ")");
  const auto conflicts = resume_conflicts(m.config, to_toml(p.config));
  if (!conflicts.empty()) {
    std::string list;
    for (const auto& c : conflicts) list += "\n  " + c;
    LLMTRAIN_FAIL(what, ": cannot resume with these settings changed (docs/checkpoints.md lists those that may):", list);
  }
}

void Job::continue_from(const std::string& what, const ckpt::Metadata& m, const std::vector<std::string>& states) {
  Parts& p = *parts_;
  LLMTRAIN_CHECK(!states.empty(), what, ": no training loader state");
  try {
    restore_loader(states);
  } catch (const Error& e) {
    LLMTRAIN_FAIL(what, ": the loader cannot continue from this checkpoint: ", e.what());
  }
  p.trainer->resume_at(m.step, m.tokens_seen);
  p.resumed_from = what;
  if (p.memory_tier) p.memory_tier->resumed_at(m.step);
  dist::agree(p.runtime, [&] {
    if (p.runtime.rank() == 0) trim_provenance(p.config.train.run_dir, m.step);
  });
}

void Job::warn_batch_change(const ckpt::Metadata& m) {
  Parts& p = *parts_;
  if (const auto change = global_batch_change(m.config, m.world_size, to_toml(p.config), p.runtime.size()); !change.empty())
    log_warn(change);
}

void Job::start_memory_tier() {
  Parts& p = *parts_;
  const CheckpointConfig& c = p.config.checkpoint;
  if (c.memory_every_steps <= 0) return;
  if (c.dir.empty())
    return log_warn("checkpoint.memory_every_steps = ", c.memory_every_steps, " needs a checkpoint.dir: no memory snapshots");
  if (!p.runtime.thread_multiple())
    return log_warn("checkpoint.memory_every_steps needs MPI_THREAD_MULTIPLE, which this MPI library does not provide: "
                    "no memory snapshots");
  p.memory_tier = std::make_unique<ckpt::MemoryTier>(p.runtime.comm(), memory_dir(p.config), memory_key(p.config));
  log_info("memory snapshots every ", counted(c.memory_every_steps, "step"), " in ", p.memory_tier->dir(), " on ",
           counted(p.memory_tier->node_count(), "node"));
  if (p.memory_tier->node_count() == 1)
    log_warn("checkpoint.memory_every_steps: all ranks are on one node, so memory snapshots have no buddy copy on "
             "another node (they survive a lost rank, not a lost node)");
}

void Job::restore_memory(const ckpt::MemoryTier::Found& found) {
  Parts& p = *parts_;
  ckpt::Contents contents;
  const HostCopies::Units units = p.host_copies->to_fill();
  p.memory_tier->restore(found, contents, *units.params, *units.first_moments, *units.second_moments);
  p.host_copies->loaded(true);
  const ckpt::Metadata& m = contents.metadata;
  const std::string what = cat(p.memory_tier->dir(), " (memory snapshot at step ", m.step, ")");
  check_resumable(what, m);
  p.optimizer->restore_steps_taken(contents.optimizer_step);
  continue_from(what, m, contents.train_loader);
  log_info("resumed from memory snapshot at step ", m.step, " (", found.local_parts, " local, ", found.buddy_parts,
           " buddy parts; saved by ", counted(m.world_size, "rank"), ", ", m.tokens_seen, " tokens seen)");
  warn_batch_change(m);
}

const std::string& Job::resumed_from() const { return parts_->resumed_from; }

void Job::initialize_from(const std::string& path) {
  Parts& p = *parts_;
  ckpt::Reader reader(path, p.runtime.comm());
  const ckpt::Metadata& m = reader.metadata();
  LLMTRAIN_CHECK(m.tokenizer_fingerprint == p.encoder->fingerprint(), "checkpoint.init_from: ", path,
                 ": written with another tokenizer (fingerprint ", m.tokenizer_fingerprint, "; ", p.config.tokenizer.path,
                 " has ", p.encoder->fingerprint(), "); use the tokenizer it names (llmtrain-ckpt inspect)");
  Config resolved = p.config;  // vocab_size, n_kv_heads and d_ff as derived (the import states them)
  resolved.model = p.model_config;
  const auto conflicts = model_conflicts(m.config, to_toml(resolved));
  if (!conflicts.empty()) {
    std::string list;
    for (const auto& c : conflicts) list += "\n  " + c;
    LLMTRAIN_FAIL("checkpoint.init_from: ", path, ": its [model] differs from this run's:", list);
  }
  reader.read_units("model", *p.host_copies->to_fill().params, "");
  p.host_copies->loaded(false);
  log_info("parameters from ", path, " (checkpoint.init_from, saved at step ", m.step,
           "); optimizer, schedule and data loader start afresh");
}

void Job::resume() {
  const CheckpointConfig& c = parts_->config.checkpoint;
  if (c.resume == "never") return;
  if (c.resume != "auto") return restore_checkpoint(c.resume);
  if (c.dir.empty()) return;
  // Rank 0's listing for everyone: a file system may show a file to some ranks sooner than to others.
  std::string listing;
  if (parts_->runtime.rank() == 0)
    for (const auto& e : ckpt::list_checkpoints(c.dir)) listing += cat(e.step, " ", e.path, "\n");
  listing = dist::all_gather_bytes(parts_->runtime, listing)[0];
  std::vector<std::string> candidates;
  std::vector<std::int64_t> steps;
  for (std::size_t a = 0, b; (b = listing.find('\n', a)) != std::string::npos; a = b + 1) {
    const std::size_t space = listing.find(' ', a);
    steps.push_back(std::stoll(listing.substr(a, space - a)));
    candidates.push_back(listing.substr(space + 1, b - space - 1));
  }
  // The memory tier's newest complete generation wins over disk checkpoints of the same or earlier steps.
  ckpt::MemoryTier::Found memory;
  if (parts_->memory_tier) memory = parts_->memory_tier->find();
  std::string reasons;
  for (auto it = candidates.rbegin(); it != candidates.rend(); ++it) {
    if (memory.step >= 0 && steps[std::size_t(candidates.rend() - it) - 1] <= memory.step) break;
    try {
      ckpt::Reader(*it, parts_->runtime.comm()).verify();  // the same error on every rank, or none
    } catch (const Error& e) {
      log_warn("not resuming from ", *it, ": ", e.what(), std::next(it) != candidates.rend() ? "; trying the previous one" : "");
      reasons += cat("\n  ", e.what());
      continue;
    }
    return restore_checkpoint(*it);
  }
  if (memory.step >= 0) return restore_memory(memory);
  LLMTRAIN_CHECK(candidates.empty(), c.dir, ": no checkpoint there verifies (checkpoint.resume = \"auto\"; move them "
                 "away or set checkpoint.resume = \"never\" to start afresh):", reasons);
}

}  // namespace llmtrain::job
