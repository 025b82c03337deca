// train.device: where the model trains, decided from what each rank sees of CUDA devices (dist::DeviceQuery)
// by one pure function (resolve_device), which the run and the dry run share and the tests check case by case.
// One rank per GPU: a node needs as many visible devices as it has ranks. docs/gpu.md describes the choice.
#pragma once

#include <string>

#include "llmtrain/config/config.hpp"
#include "llmtrain/dist/collectives.hpp"
#include "llmtrain/dist/device_query.hpp"
#include "llmtrain/dist/runtime.hpp"

namespace llmtrain::job {

// Whether this build trains on a CUDA device: the one place that says so. True since the device training step
// (issue 28: the replicated store, AdamW and the model on the device, checkpoints through host copies) is
// wired; it is built and compiled but has not run on a GPU yet (docs/gpu.md, "Status"). False would make
// train.device = "cuda" stop with an error and "auto" train on the CPU with a note.
constexpr bool device_training_available() { return true; }

enum class Device { cpu, cuda };

struct DeviceChoice {
  Device device = Device::cpu;
  std::string why;             // for the log: `train.device = "auto": this rank sees 0 CUDA devices (...)`
  bool device_unused = false;  // "auto" saw a device it does not train on (rank 0 warns)
  dist::TensorPlace tensors() const {
    return device == Device::cuda ? dist::TensorPlace::device : dist::TensorPlace::host;
  }
  const char* name() const { return device == Device::cuda ? "cuda" : "cpu"; }
};

// Why the run's other settings cannot train on a device in this build, or "" when they can: the sharded
// strategies (fsdp, hsdp) keep their shards in host memory until the device stores of issue 29, and the device
// path all-reduces gradients in fp32 (parallel.comm_dtype = "bf16" rounds them with host wire kernels), and the
// text sample (train.sample_every) decodes on the host backend only.
std::string device_unsupported(const Config& config);

// train.device = `setting` ("auto", "cpu" or "cuda") on a rank that sees `seen`, in a build whose device training
// step is available or not (device_training_available(), a parameter for the tests), for settings that can or
// cannot train on a device (`unsupported`: device_unsupported's answer):
//   "cpu":  cpu.
//   "cuda": cuda where the build has CUDA, the node has a device per rank (device_count >= local_ranks) and
//           device_training and `unsupported` is empty; otherwise llmtrain::Error naming what is missing, the
//           counts first: `train.device = "cuda": this rank sees 0 CUDA devices (2 ranks on this node)...`.
//   "auto": cuda where "cuda" would be; otherwise cpu, saying why (device_unused where a device was seen).
// The answer depends on the node's counts, not on the rank's place in it, so the ranks of a node agree.
DeviceChoice resolve_device(const std::string& setting, const dist::DeviceQuery& seen, bool device_training,
                            const std::string& unsupported);

// This rank's view of its devices for config.train.device (dist::query_devices), except that "cpu" never starts
// CUDA (no context, no device memory taken): then no devices, and this rank's place on its node.
dist::DeviceQuery devices_seen(const Config& config, const dist::Runtime& runtime);

// "NVIDIA H100 80GB HBM3 (device 0, compute capability 9.0, 132 SMs, 79.10 GiB free of 79.65 GiB)", or
// "no CUDA device".
std::string describe_device(const dist::DeviceQuery& seen);

struct ChosenDevice {
  DeviceChoice choice;
  dist::DeviceQuery seen;  // this rank's query
};

// Collective: queries this rank's devices and resolves config.train.device on every rank. An error on any
// rank ends every rank with one message (dist::agree: printed once, exit status 1, no hang); "auto" trains on
// cuda only where every rank resolved it so (all ranks train on one kind of device). Rank 0 logs the choice.
ChosenDevice choose_device(const Config& config, const dist::Runtime& runtime);

}  // namespace llmtrain::job
