// The GPU checks of the preflight (see gpu_check.hpp).
#include "gpu_check.hpp"

#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>

#include "dry_run_report.hpp"
#include "llmtrain/core/counted.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/dist/gather_bytes.hpp"
#include "llmtrain/dist/nccl_probe.hpp"

namespace llmtrain::job {
namespace {

constexpr std::size_t kProbeBytes = std::size_t(64) << 20;  // large enough for bandwidth, seconds at worst
constexpr int kProbeIterations = 5;

int read_int(const std::filesystem::path& path, int otherwise) {
  std::ifstream in(path);
  int value = otherwise;
  return in >> value ? value : otherwise;
}

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

std::string join(const std::vector<int>& values) {
  std::string out;
  for (const int v : values) out += (out.empty() ? "" : ",") + std::to_string(v);
  return out;
}

}  // namespace

GpuTopology gpu_topology(const std::string& sysfs_root, const std::string& pci_bus_id, const std::vector<int>& cpus) {
  namespace fs = std::filesystem;
  GpuTopology topology;
  std::string bus = pci_bus_id;  // CUDA writes hex digits in capitals, sysfs in small letters
  std::transform(bus.begin(), bus.end(), bus.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
  topology.gpu_numa = read_int(fs::path(sysfs_root) / "bus/pci/devices" / bus / "numa_node", -1);
  std::error_code ec;
  for (const int cpu : cpus) {
    for (const auto& entry : fs::directory_iterator(fs::path(sysfs_root) / "devices/system/cpu" / ("cpu" + std::to_string(cpu)), ec)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("node", 0) == 0 && name.size() > 4 && std::isdigit(static_cast<unsigned char>(name[4])))
        topology.rank_numa.push_back(std::stoi(name.substr(4)));
    }
  }
  std::sort(topology.rank_numa.begin(), topology.rank_numa.end());
  topology.rank_numa.erase(std::unique(topology.rank_numa.begin(), topology.rank_numa.end()), topology.rank_numa.end());
  if (topology.gpu_numa >= 0)
    for (const auto& entry : fs::directory_iterator(fs::path(sysfs_root) / "class/infiniband", ec))
      if (read_int(entry.path() / "device/numa_node", -2) == topology.gpu_numa)
        topology.hcas.push_back(entry.path().filename().string());
  std::sort(topology.hcas.begin(), topology.hcas.end());
  return topology;
}

void check_gpus(const Config& config, const dist::DeviceQuery& seen, bool on_gpu, const dist::Runtime& runtime,
                CheckResult& result) {
  // Every rank takes part in the collectives below, so every rank decides the same way whether to run them.
  int drives = on_gpu ? 1 : 0;
  LLMTRAIN_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &drives, 1, MPI_INT, MPI_MIN, runtime.comm()));
  if (!drives) {
    result.notes.push_back(config.train.device == "cpu"
                               ? "GPU checks: skipped (train.device = \"cpu\")"
                               : cat("GPU checks: skipped (not every rank trains on a GPU of its own: train.device = \"",
                                     config.train.device, "\", above)"));
    return;
  }
  // One rank per GPU: no two ranks of a host on the same physical device.
  const auto owners = dist::all_gather_bytes(runtime, runtime.hostname() + " " + seen.pci_bus_id);
  std::vector<int> sharing;
  for (int r = 0; r < int(owners.size()); ++r)
    if (owners[std::size_t(r)] == owners[std::size_t(runtime.rank())]) sharing.push_back(r);
  if (sharing.size() > 1)
    result.problems.push_back(cat("GPU ", seen.pci_bus_id, " on ", runtime.hostname(), " is driven by ranks ",
                                  join(sharing), ": one rank per GPU (check CUDA_VISIBLE_DEVICES and the launcher's "
                                  "--gpus-per-task)"));
  else
    result.notes.push_back(cat("GPU: each rank drives its own (", seen.name, ", compute capability ", seen.cc_major, ".",
                               seen.cc_minor, ")"));
  const int nccl = dist::nccl_version();
  result.notes.push_back(cat("NCCL ", nccl / 10000, ".", nccl / 100 % 100, ".", nccl % 100, " loaded",
                             nccl >= 23000 ? "" : " (two ranks on one GPU would need 2.30 or newer)"));
  const GpuTopology topology = gpu_topology("/sys", seen.pci_bus_id, allowed_cpus());
  if (topology.gpu_numa >= 0 && !topology.rank_numa.empty() &&
      std::find(topology.rank_numa.begin(), topology.rank_numa.end(), topology.gpu_numa) == topology.rank_numa.end())
    result.warnings.push_back(cat("rank runs on CPUs of NUMA node ", join(topology.rank_numa), " while its GPU sits on node ",
                                  topology.gpu_numa, ": launch through jobscripts/env/bind-rank.sh (docs/tuning.md)"));
  if (topology.gpu_numa >= 0)
    result.notes.push_back(cat("GPU on NUMA node ", topology.gpu_numa, ", HCAs there: ",
                               topology.hcas.empty() ? std::string("none") : topology.hcas.front() +
                               (topology.hcas.size() > 1 ? cat(" and ", topology.hcas.size() - 1, " more") : "")));
  // The all-reduce only where every rank has its own GPU: a shared one would make NCCL refuse or hang.
  int ready = result.problems.empty() ? 1 : 0;
  LLMTRAIN_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &ready, 1, MPI_INT, MPI_MIN, runtime.comm()));
  if (!ready) {
    result.notes.push_back("NCCL all-reduce: skipped (a GPU problem above)");
    return;
  }
  try {
    const auto timing = dist::time_nccl_all_reduce(runtime, kProbeBytes, kProbeIterations,
                                                   config.parallel.collective_timeout_s);
    result.notes.push_back(cat("NCCL all-reduce of ", format_bytes(double(kProbeBytes)), " over ",
                               counted(runtime.size(), "rank"), ": ", timing.seconds * 1e3, " ms, bus bandwidth ",
                               timing.bus_bytes_per_s / 1e9, " GB/s"));
  } catch (const Error& e) {
    result.problems.push_back(cat("NCCL all-reduce: ", e.what()));
  }
}

}  // namespace llmtrain::job
