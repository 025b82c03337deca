// Checkpoints through the job, under mpirun:
//   bitwise WORK CONFIG  20 steps straight, against a run of 20 steps with a checkpoint at step 10 and a fresh job
//                        resuming from that checkpoint for steps 11..20 (a crash after step 20's metrics but
//                        before its checkpoint), in one process: the same losses (bit for bit), parameters and
//                        next batch; metrics.jsonl of the resumed run holds steps 1..20 once each. Both
//                        evaluate a held-out dataset every 5 steps: the held-out losses after the resume
//                        (steps 15 and 20) equal the straight run's, bit for bit.
//   flip FILE DATASET    flips one bit of the dataset's stored data (serial HDF5 finds where it is), for the
//                        fault tests;
//   logits CKPT CONFIG   resumes a job from CKPT and writes the logits of a fixed token sequence to CKPT.logits
//                        (int64 n, int64 vocab, int32 tokens[n], float logits[n][vocab]): the reference for
//                        the transformers check of the safetensors export;
//   audit RUN_DIR CONFIG the provenance of every training run that wrote to RUN_DIR (a chain of resumes on
//                        different rank counts) covers every token of epoch 0 exactly once.
#include <hdf5.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../job/epoch0_audit.hpp"
#include "llmtrain/config/config.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/core/hash.hpp"
#include "llmtrain/data/tokenizer_encoder.hpp"
#include "llmtrain/dist/spmd_main.hpp"
#include "llmtrain/job/job.hpp"
#include "llmtrain/job/options.hpp"

namespace {

using namespace llmtrain;
namespace fs = std::filesystem;

struct Outcome {
  std::vector<double> losses;  // per step taken by this job
  std::uint64_t params = 0;    // hash of this rank's parameters
  std::uint64_t next_batch = 0;
};

Outcome train(const Config& config, dist::Runtime& runtime, std::int64_t expect_start) {
  job::Job job(config, runtime, 1e11);
  LLMTRAIN_CHECK(job.trainer().step() == expect_start, "the job starts at step ", job.trainer().step(), ", expected ",
                 expect_start);
  Outcome out;
  for (const auto& m : job.run()) out.losses.push_back(m.loss);
  for (const auto& unit : job.trainer().store().param_shards())
    out.params = mix64(out.params ^ hash_bytes(reinterpret_cast<const char*>(unit.flat.data()), unit.flat.size() * sizeof(float)));
  const Batch next = job.train_batches().next();
  out.next_batch = hash_bytes(reinterpret_cast<const char*>(next.tokens.data()), next.tokens.size() * sizeof(TokenId));
  return out;
}

int bitwise(const fs::path& work, const std::string& config_path, dist::Runtime& runtime) {
  Config config = load_config(config_path);
  config.train.steps = 20;
  config.checkpoint.keep_last = 0;
  // The first evaluation (step 5) precedes the checkpoint: a held-out loader saved and restored after it
  // would make the resumed run evaluate other text.
  config.data.eval_datasets = {{"held-out", (fs::path(config_path).parent_path() / "../data/corpus/lgpl-2.1.jsonl").string(), 1.0, "text"}};
  config.train.eval_every = 5;
  config.train.eval_batches = 2;
  Config straight = config, first = config, second = config;
  straight.train.run_dir = (work / "straight").string();
  first.train.run_dir = second.train.run_dir = (work / "resumed").string();
  first.checkpoint.dir = second.checkpoint.dir = (work / "resumed" / "ckpt").string();
  first.checkpoint.every_steps = 10;
  first.checkpoint.resume = "never";
  second.checkpoint.resume = (work / "resumed" / "ckpt" / "step_00000010.h5").string();
  Kokkos::ScopeGuard kokkos;
  const Outcome a = train(straight, runtime, 0);
  train(first, runtime, 0);
  const Outcome b = train(second, runtime, 10);
  int problems = 0;
  if (a.losses.size() != 20 || b.losses.size() != 10) {
    std::fprintf(stderr, "rank %d: %zu straight and %zu resumed steps\n", runtime.rank(), a.losses.size(), b.losses.size());
    ++problems;
  } else {
    for (std::size_t i = 0; i < 10; ++i)
      if (std::memcmp(&a.losses[10 + i], &b.losses[i], sizeof(double)) != 0)
        ++problems, std::fprintf(stderr, "step %zu: loss %.17g straight, %.17g resumed\n", 11 + i, a.losses[10 + i], b.losses[i]);
  }
  if (a.params != b.params) ++problems, std::fprintf(stderr, "rank %d: parameters differ after step 20\n", runtime.rank());
  if (a.next_batch != b.next_batch) ++problems, std::fprintf(stderr, "rank %d: the next batches differ\n", runtime.rank());
  if (runtime.rank() == 0) {
    const auto read_metrics = [](const fs::path& path, std::vector<std::int64_t>& train_steps, std::map<std::int64_t, double>& evals) {
      std::ifstream in(path);
      for (std::string line; std::getline(in, line);) {
        const auto j = nlohmann::json::parse(line);
        if (j["type"] == "train") train_steps.push_back(j["step"].get<std::int64_t>());
        else evals[j["step"].get<std::int64_t>()] = j["eval_loss"].get<double>();
      }
    };
    std::vector<std::int64_t> steps, straight_steps;
    std::map<std::int64_t, double> evals, straight_evals;
    read_metrics(work / "resumed" / "metrics.jsonl", steps, evals);
    read_metrics(work / "straight" / "metrics.jsonl", straight_steps, straight_evals);
    std::vector<std::int64_t> expected(20);
    for (std::size_t i = 0; i < 20; ++i) expected[i] = std::int64_t(i) + 1;
    if (steps != expected) ++problems, std::fprintf(stderr, "metrics.jsonl of the resumed run: %zu lines, not steps 1..20\n", steps.size());
    for (const std::int64_t step : {5, 10, 15, 20}) {
      if (!evals.count(step) || !straight_evals.count(step)) {
        ++problems, std::fprintf(stderr, "no held-out loss at step %lld\n", static_cast<long long>(step));
        continue;
      }
      if (std::memcmp(&evals[step], &straight_evals[step], sizeof(double)) != 0)
        ++problems, std::fprintf(stderr, "step %lld: held-out loss %.17g straight, %.17g resumed\n",
                                 static_cast<long long>(step), straight_evals[step], evals[step]);
    }
  }
  int total = problems;
  MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_INT, MPI_SUM, runtime.comm());
  if (runtime.rank() == 0) std::printf("bitwise resume: %d problems\n%s\n", total, total == 0 ? "PASS" : "FAIL");
  return total == 0 ? 0 : 1;
}

int audit(const fs::path& run_dir, const std::string& config_path, dist::Runtime& runtime) {
  if (runtime.rank() != 0) return 0;
  const auto result = testing::audit_epoch0(load_config(config_path), {run_dir});
  std::printf("%zu documents of epoch 0 over %d provenance rows: %d problems\n%s\n", result.documents, result.rows,
              result.problems, result.problems == 0 ? "PASS" : "FAIL");
  return result.problems == 0 ? 0 : 1;
}

int flip(const std::string& file, const std::string& dataset) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t d = f < 0 ? -1 : H5Dopen2(f, dataset.c_str(), H5P_DEFAULT);
  const haddr_t offset = d < 0 ? HADDR_UNDEF : H5Dget_offset(d);
  if (d >= 0) H5Dclose(d);
  if (f >= 0) H5Fclose(f);
  LLMTRAIN_CHECK(offset != HADDR_UNDEF, file, ": no stored data for ", dataset);
  std::fstream io(file, std::ios::in | std::ios::out | std::ios::binary);
  char byte = 0;
  io.seekg(std::streamoff(offset + 5));
  io.read(&byte, 1);
  byte = char(byte ^ 0x04);
  io.seekp(std::streamoff(offset + 5));
  io.write(&byte, 1);
  LLMTRAIN_CHECK(io.good(), file, ": cannot write");
  std::printf("flipped a bit at byte %llu of %s (inside %s)\n", (unsigned long long)(offset + 5), file.c_str(), dataset.c_str());
  return 0;
}

int logits(const std::string& ckpt_path, const std::string& config_path, dist::Runtime& runtime) {
  Config config = load_config(config_path);
  config.checkpoint.resume = ckpt_path;
  config.checkpoint.dir.clear();
  config.train.run_dir = ckpt_path + ".run";
  Kokkos::ScopeGuard kokkos;
  job::Job job(config, runtime, 1e11);
  const std::int64_t n = config.data.seq_len, vocab = job.model_config().vocab_size;
  Batch batch;
  batch.rows = 1;
  batch.seq_len = n;
  for (std::int64_t i = 0; i <= n; ++i) batch.tokens.push_back(TokenId((i * 7919 + 11) % vocab));
  batch.doc_index.assign(batch.tokens.size(), 0);
  const std::vector<float> values = job.trainer().model().logits(batch);
  if (runtime.rank() == 0) {
    std::ofstream out(ckpt_path + ".logits", std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(&n), 8);
    out.write(reinterpret_cast<const char*>(&vocab), 8);
    out.write(reinterpret_cast<const char*>(batch.tokens.data()), std::streamsize(n * sizeof(TokenId)));
    out.write(reinterpret_cast<const char*>(values.data()), std::streamsize(values.size() * sizeof(float)));
    LLMTRAIN_CHECK(out.good() && std::int64_t(values.size()) == n * vocab, ckpt_path, ".logits: cannot write");
    std::printf("wrote %s.logits: %lld positions x %lld logits\nPASS\n", ckpt_path.c_str(), (long long)n, (long long)vocab);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc == 4 ? argv[1] : "";
  if (mode != "bitwise" && mode != "audit" && mode != "flip" && mode != "logits") {
    std::fprintf(stderr, "usage: ckpt_job_probe bitwise WORK CONFIG | audit RUN_DIR CONFIG | flip FILE DATASET | "
                         "logits CKPT CONFIG\n");
    return 2;
  }
  const std::string dir = argv[2], config = argv[3];
  if (mode == "flip") return flip(dir, config);
  return dist::run_spmd(argc, argv, [&](dist::Runtime& runtime) {
    if (mode == "audit") return audit(dir, config, runtime);
    if (mode == "logits") return logits(dir, config, runtime);
    if (runtime.rank() == 0) fs::remove_all(dir);
    runtime.barrier();
    return bitwise(dir, config, runtime);
  });
}
