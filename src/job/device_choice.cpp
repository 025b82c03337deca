// resolve_device() and choose_device(): see device_choice.hpp.
#include "device_choice.hpp"

#include <mpi.h>

#include "dry_run_report.hpp"
#include "llmtrain/core/counted.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/core/log.hpp"
#include "llmtrain/dist/spmd_main.hpp"

namespace llmtrain::job {

std::string device_unsupported(const Config& config) {
  const ParallelConfig& c = config.parallel;
  if (c.strategy != "replicated")
    return cat("parallel.strategy = \"", c.strategy, "\" keeps its shards in host memory in this build (the device ",
               "stores of fsdp and hsdp come with the NCCL work of issue 29); use parallel.strategy = \"replicated\"");
  if (c.comm_dtype != "fp32")
    return cat("parallel.comm_dtype = \"", c.comm_dtype, "\" rounds gradients with host wire kernels, and a run on ",
               "devices all-reduces them in fp32 in this build; use parallel.comm_dtype = \"fp32\"");
  if (config.train.sample_every > 0)
    return cat("train.sample_every = ", config.train.sample_every, " samples with the host decoder (its key/value ",
               "cache is host memory) in this build; use train.sample_every = 0");
  return "";
}

DeviceChoice resolve_device(const std::string& setting, const dist::DeviceQuery& seen, bool device_training,
                            const std::string& unsupported) {
  LLMTRAIN_CHECK(setting == "auto" || setting == "cpu" || setting == "cuda", "train.device: \"", setting,
                 "\" is not one of \"auto\", \"cpu\", \"cuda\"");
  if (setting == "cpu") return {Device::cpu, "train.device = \"cpu\"", false};
  const bool required = setting == "cuda";
  const std::string key = cat("train.device = \"", setting, "\": ");
  const std::string counts = cat("this rank sees ", counted(seen.device_count, "CUDA device"), " (",
                                 counted(seen.local_ranks, "rank"), " on this node)");
  if (seen.device_count == 0) {
    const std::string why = cat(counts, seen.reason.empty() ? "" : ": " + seen.reason);
    LLMTRAIN_CHECK(!required, key, why,
                   seen.cuda_build
                       ? "; run where each rank has a GPU (CUDA_VISIBLE_DEVICES), or use \"cpu\" or \"auto\""
                       : "; use \"cpu\" or \"auto\", or a build with CUDA");
    return {Device::cpu, cat(key, why, ": training on the CPU"), false};
  }
  if (!seen.own_device && seen.device_count < seen.local_ranks) {
    const std::string why = cat(counts, ", and training on GPUs takes one per rank");
    LLMTRAIN_CHECK(!required, key, why, "; launch at most ", seen.device_count, " per node (mpirun --map-by ppr:",
                   seen.device_count, ":node, srun --ntasks-per-node=", seen.device_count, "), or use \"cpu\"");
    return {Device::cpu, cat(key, why, ": training on the CPU"), true};
  }
  if (!device_training) {
    LLMTRAIN_CHECK(!required, key, "this build's device training step is not complete yet (issue 28); use \"cpu\"");
    return {Device::cpu,
            cat(key, counts, ", but this build's device training step is not complete yet (issue 28): training on ",
                "the CPU"),
            true};
  }
  if (!unsupported.empty()) {
    LLMTRAIN_CHECK(!required, key, unsupported, ", or train.device = \"cpu\"");
    return {Device::cpu, cat(key, counts, ", but ", unsupported, ": training on the CPU"), true};
  }
  if (seen.own_device && seen.device_count < seen.local_ranks)
    return {Device::cuda, cat(key, "a CUDA device of its own (CUDA_VISIBLE_DEVICES) for each of ",
                              counted(seen.local_ranks, "rank"), " on this node"),
            false};
  return {Device::cuda, cat(key, counted(seen.device_count, "CUDA device"), " for ", counted(seen.local_ranks, "rank"),
                            " on this node"),
          false};
}

dist::DeviceQuery devices_seen(const Config& config, const dist::Runtime& runtime) {
  if (config.train.device != "cpu") return dist::query_devices(runtime);
  dist::DeviceQuery none;
  none.local_rank = runtime.local_rank();
  none.local_ranks = runtime.local_size();
  return none;
}

std::string describe_device(const dist::DeviceQuery& seen) {
  if (!seen.has_device()) return "no CUDA device";
  return cat(seen.name, " (device ", seen.device, ", compute capability ", seen.cc_major, ".", seen.cc_minor, ", ",
             seen.sm_count, " SMs, ", format_bytes(double(seen.free_bytes)), " free of ",
             format_bytes(double(seen.total_bytes)), ")");
}

ChosenDevice choose_device(const Config& config, const dist::Runtime& runtime) {
  ChosenDevice out;
  dist::agree(runtime, [&] {
    out.seen = devices_seen(config, runtime);
    out.choice = resolve_device(config.train.device, out.seen, device_training_available(), device_unsupported(config));
  });
  // All ranks train on one kind of device: where "auto" chose the CPU on some rank, every rank does.
  int cuda_everywhere = out.choice.device == Device::cuda ? 1 : 0;
  LLMTRAIN_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &cuda_everywhere, 1, MPI_INT, MPI_MIN, runtime.comm()));
  if (out.choice.device == Device::cuda && !cuda_everywhere)
    out.choice = {Device::cpu,
                  "train.device = \"auto\": another rank has no CUDA device of its own, and all ranks train on one "
                  "kind of device: training on the CPU",
                  true};
  if (out.choice.device == Device::cuda)
    log_info("device: cuda, ", describe_device(out.seen), " on host ", runtime.hostname(), " (", out.choice.why, ")");
  else if (out.choice.device_unused)
    log_warn("device: cpu (", out.choice.why, ")");
  else
    log_info("device: cpu (", out.choice.why, ")");
  return out;
}

}  // namespace llmtrain::job
