// The network half of `llmtrain --preflight`: the interfaces a job is told to use (NCCL_SOCKET_IFNAME and
// Open MPI's btl_tcp_if_include / oob_tcp_if_include, read from the environment as the libraries read them)
// checked on this host, then a TCP ring over the chosen interface (rank r connects to rank r + 1) so that a
// wrong or unreachable interface is named before NCCL or MPI hang on it.
#pragma once

#include <string>
#include <vector>

#include "check_result.hpp"
#include "llmtrain/dist/runtime.hpp"

namespace llmtrain::job {

struct HostInterface {
  std::string name;
  std::string address;  // IPv4, dotted
  bool up = false;
};

// This host's interfaces with an IPv4 address.
std::vector<HostInterface> host_interfaces();

// NCCL_SOCKET_IFNAME's rule: a comma list of prefixes ("eth" matches eth0 and eth10), "=" before the list
// for exact names, "^" for exclusion (both: "^=docker0"). Returns the matching interface names.
std::vector<std::string> nccl_interface_matches(const std::string& spec, const std::vector<HostInterface>& ifs);

// One port of an RDMA device, as /sys/class/infiniband/<device>/ports/<port>/ describes it.
struct IbPort {
  std::string device;
  int port = 0;
  bool active = false;     // state "4: ACTIVE"
  std::string link_layer;  // "InfiniBand" or "Ethernet" (RoCE)
  std::string name() const { return device + ":" + std::to_string(port); }
};

// The ports under a sysfs class directory (normally /sys/class/infiniband; empty when it is absent).
std::vector<IbPort> ib_ports(const std::string& sysfs_dir);

// NCCL_IB_HCA's rule: a comma list of device[:port] items matched as prefixes of device names ("mlx5_1"
// also matches mlx5_10), "=" before the list for exact names, "^" to exclude. Returns the matching ports.
std::vector<IbPort> nccl_hca_matches(const std::string& spec, const std::vector<IbPort>& ports);

// NCCL_IB_HCA and NCCL_IB_GID_INDEX (when set) against the ports under sysfs_dir: something must match,
// matched ports must be active, and on RoCE ports the GID index must exist (a note when it is not RoCE v2).
void check_ib(const std::string& sysfs_dir, CheckResult& result);

// Collective: checks the configured interfaces on every rank and, where one is chosen, connects the ranks
// in a ring over it (each connection waits at most timeout_ms).
CheckResult check_network(const dist::Runtime& runtime, int timeout_ms);

}  // namespace llmtrain::job
