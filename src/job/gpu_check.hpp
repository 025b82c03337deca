// The GPU half of `llmtrain --preflight`, where every rank will train on a GPU (train.device resolves to cuda): each rank drives a GPU no other rank of its node drives, the NCCL library loaded, whether the rank runs
// on the CPUs of its GPU's NUMA node and which HCAs sit there (sysfs), and a small NCCL all-reduce across the
// job with its bus bandwidth. Elsewhere it notes that the GPU checks were skipped, and why.
#pragma once

#include <string>
#include <vector>

#include "check_result.hpp"
#include "device_choice.hpp"
#include "llmtrain/dist/device_query.hpp"
#include "llmtrain/dist/runtime.hpp"

namespace llmtrain::job {

// Where a GPU sits against the CPUs a rank runs on, from sysfs under `sysfs_root` ("/sys"; tests give a copy).
struct GpuTopology {
  int gpu_numa = -1;               // /sys/bus/pci/devices/<bus id>/numa_node; -1: unknown (one-node machines)
  std::vector<int> rank_numa;      // NUMA nodes of the CPUs the rank may run on, ascending
  std::vector<std::string> hcas;   // RDMA devices (/sys/class/infiniband) on the GPU's NUMA node
};
GpuTopology gpu_topology(const std::string& sysfs_root, const std::string& pci_bus_id, const std::vector<int>& cpus);

// Collective over every rank (each calls it, whatever it found): adds this rank's problems, warnings and notes.
// on_gpu: train.device resolved to cuda on this rank.
void check_gpus(const Config& config, const dist::DeviceQuery& seen, bool on_gpu, const dist::Runtime& runtime,
                CheckResult& result);

}  // namespace llmtrain::job
