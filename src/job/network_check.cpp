// Interfaces and a TCP ring between ranks (see network_check.hpp). Plain POSIX sockets: the point is to
// test the path NCCL's and Open MPI's TCP transports will take, independently of both.
#include "network_check.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "llmtrain/core/error.hpp"
#include "llmtrain/dist/gather_bytes.hpp"

namespace llmtrain::job {
namespace {

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

// Bridges and virtual switches: Open MPI's TCP transport hangs trying to use them (ompi #6377).
bool bridge_like(const std::string& name) {
  for (const char* p : {"docker", "virbr", "br-", "veth", "cni", "flannel", "lxcbr"})
    if (starts_with(name, p)) return true;
  return false;
}

// a.b.c.d/n contains address?
bool in_subnet(const std::string& cidr, const std::string& address) {
  const auto slash = cidr.find('/');
  in_addr net{}, addr{};
  if (slash == std::string::npos || inet_pton(AF_INET, cidr.substr(0, slash).c_str(), &net) != 1 ||
      inet_pton(AF_INET, address.c_str(), &addr) != 1)
    return false;
  const int bits = std::atoi(cidr.c_str() + slash + 1);
  const std::uint32_t mask = bits <= 0 ? 0 : bits >= 32 ? 0xffffffffu : ~((1u << (32 - bits)) - 1);
  return (ntohl(net.s_addr) & mask) == (ntohl(addr.s_addr) & mask);
}

const HostInterface* find(const std::vector<HostInterface>& ifs, const std::string& name) {
  for (const auto& i : ifs)
    if (i.name == name) return &i;
  return nullptr;
}

std::string names_of(const std::vector<HostInterface>& ifs) {
  std::string out;
  for (const auto& i : ifs) out += (out.empty() ? "" : ", ") + i.name + " " + i.address + (i.up ? "" : " (down)");
  return out.empty() ? "none" : out;
}

// Open MPI's *_tcp_if_include: exact interface names or CIDR subnets. Returns the interfaces it selects.
std::vector<HostInterface> check_ompi_include(const std::string& var, const std::vector<HostInterface>& ifs,
                                              CheckResult& result) {
  const std::string spec = env(var.c_str());
  std::vector<HostInterface> chosen;
  if (spec.empty()) return chosen;
  for (const std::string& item : split_commas(spec)) {
    std::vector<HostInterface> hits;
    for (const auto& i : ifs)
      if (i.name == item || in_subnet(item, i.address)) hits.push_back(i);
    if (hits.empty())
      result.problems.push_back(cat(var, "=", spec, ": no interface matches '", item, "' (this host has: ", names_of(ifs), ")"));
    for (const auto& h : hits) {
      if (!h.up) result.problems.push_back(cat(var, "=", spec, ": interface ", h.name, " is down"));
      chosen.push_back(h);
    }
  }
  return chosen;
}

std::vector<HostInterface> check_nccl_ifname(const std::vector<HostInterface>& ifs, CheckResult& result) {
  const std::string spec = env("NCCL_SOCKET_IFNAME");
  std::vector<HostInterface> chosen;
  if (spec.empty()) return chosen;
  const auto names = nccl_interface_matches(spec, ifs);
  if (names.empty()) {
    result.problems.push_back(cat("NCCL_SOCKET_IFNAME=", spec, ": no interface matches (this host has: ", names_of(ifs), ")"));
    return chosen;
  }
  for (const auto& n : names) {
    const HostInterface& i = *find(ifs, n);
    if (!i.up) result.problems.push_back(cat("NCCL_SOCKET_IFNAME=", spec, ": interface ", n, " is down"));
    if (bridge_like(n))
      result.problems.push_back(cat("NCCL_SOCKET_IFNAME=", spec, " matches ", n,
                                    ", a bridge or virtual interface: exclude it (\"^", n, "\") or name the NIC exactly"));
    chosen.push_back(i);
  }
  if (names.size() > 1 && spec[0] != '^' && spec[0] != '=')
    result.notes.push_back(cat("NCCL_SOCKET_IFNAME=", spec, " matches ", names.size(), " interfaces by prefix (",
                               names_of(chosen), "); \"=", names.front(), "\" would name one exactly"));
  return chosen;
}

int open_listener(const std::string& address, int& port, std::string& error) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  inet_pton(AF_INET, address.c_str(), &sa.sin_addr);
  socklen_t len = sizeof sa;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || ::listen(fd, 4) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) {
    error = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return -1;
  }
  port = ntohs(sa.sin_port);
  return fd;
}

// Non-blocking connect with a deadline; sends our rank so the acceptor knows who came.
std::string connect_to(const std::string& address, int port, int rank, int timeout_ms) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return std::strerror(errno);
  ::fcntl(fd, F_SETFL, O_NONBLOCK);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<std::uint16_t>(port));
  inet_pton(AF_INET, address.c_str(), &sa.sin_addr);
  std::string error;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 && errno != EINPROGRESS) {
    error = std::strerror(errno);
  } else {
    pollfd p{fd, POLLOUT, 0};
    int so_error = 0;
    socklen_t len = sizeof so_error;
    if (::poll(&p, 1, timeout_ms) != 1) error = cat("no answer within ", timeout_ms / 1000.0, " s");
    else if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &len) != 0 || so_error != 0) error = std::strerror(so_error);
    else if (::send(fd, &rank, sizeof rank, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof rank)) error = std::strerror(errno);
  }
  ::close(fd);
  return error;
}

// Waits for the previous rank's connection; "" when it came.
std::string accept_from(int listener, int expected_rank, int timeout_ms) {
  pollfd p{listener, POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) != 1) return cat("no connection from rank ", expected_rank, " within ", timeout_ms / 1000.0, " s");
  const int fd = ::accept(listener, nullptr, nullptr);
  if (fd < 0) return std::strerror(errno);
  int who = -1;
  pollfd q{fd, POLLIN, 0};
  const bool got = ::poll(&q, 1, timeout_ms) == 1 && ::recv(fd, &who, sizeof who, MSG_WAITALL) == static_cast<ssize_t>(sizeof who);
  ::close(fd);
  return got && who == expected_rank ? "" : cat("a connection came but not from rank ", expected_rank);
}

// NCCL's socket transport: helper threads x sockets per thread is capped at 64 (NCCL reduces larger
// settings silently), and NTHREADS is limited to 1..16.
void check_nccl_sockets(CheckResult& result) {
  const std::string threads = env("NCCL_SOCKET_NTHREADS"), socks = env("NCCL_NSOCKS_PERTHREAD");
  const int t = threads.empty() ? 1 : std::atoi(threads.c_str()), n = socks.empty() ? 1 : std::atoi(socks.c_str());
  if (t < 1 || t > 16) result.problems.push_back(cat("NCCL_SOCKET_NTHREADS=", threads, ": NCCL accepts 1 to 16"));
  if (n < 1) result.problems.push_back(cat("NCCL_NSOCKS_PERTHREAD=", socks, ": must be at least 1"));
  if (t * n > 64)
    result.problems.push_back(cat("NCCL_SOCKET_NTHREADS=", t, " x NCCL_NSOCKS_PERTHREAD=", n, " = ", t * n,
                                  " sockets: NCCL caps the product at 64, so these settings are not what runs"));
}

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string port_names(const std::vector<IbPort>& ports) {
  std::string out;
  for (const auto& p : ports) out += (out.empty() ? "" : ", ") + p.name() + (p.active ? "" : " (not active)");
  return out.empty() ? "none" : out;
}

}  // namespace

std::vector<IbPort> ib_ports(const std::string& sysfs_dir) {
  namespace fs = std::filesystem;
  std::vector<IbPort> out;
  std::error_code ec;
  for (const auto& dev : fs::directory_iterator(sysfs_dir, ec)) {
    for (const auto& port : fs::directory_iterator(dev.path() / "ports", ec)) {
      IbPort p;
      p.device = dev.path().filename().string();
      p.port = std::atoi(port.path().filename().c_str());
      p.active = read_line((port.path() / "state").string()).find("ACTIVE") != std::string::npos;
      p.link_layer = read_line((port.path() / "link_layer").string());
      out.push_back(p);
    }
  }
  std::sort(out.begin(), out.end(), [](const IbPort& a, const IbPort& b) { return a.name() < b.name(); });
  return out;
}

std::vector<IbPort> nccl_hca_matches(const std::string& spec, const std::vector<IbPort>& ports) {
  std::string s = spec;
  const bool exclude = !s.empty() && s[0] == '^';
  if (exclude) s.erase(0, 1);
  const bool exact = !s.empty() && s[0] == '=';
  if (exact) s.erase(0, 1);
  std::vector<IbPort> out;
  for (const auto& p : ports) {
    bool hit = false;
    for (const auto& item : split_commas(s)) {
      const auto colon = item.find(':');
      const std::string dev = item.substr(0, colon);
      const bool port_ok = colon == std::string::npos || std::atoi(item.c_str() + colon + 1) == p.port;
      hit = hit || ((exact ? p.device == dev : starts_with(p.device, dev)) && port_ok);
    }
    if (hit != exclude) out.push_back(p);
  }
  return out;
}

void check_ib(const std::string& sysfs_dir, CheckResult& result) {
  const std::string spec = env("NCCL_IB_HCA");
  if (spec.empty()) return;
  const auto ports = ib_ports(sysfs_dir);
  const auto matched = nccl_hca_matches(spec, ports);
  if (matched.empty()) {
    result.problems.push_back(cat("NCCL_IB_HCA=", spec, ": no RDMA port matches (this host has: ", port_names(ports), ")"));
    return;
  }
  const std::string gid = env("NCCL_IB_GID_INDEX");
  for (const auto& p : matched) {
    if (!p.active) result.problems.push_back(cat("NCCL_IB_HCA=", spec, ": port ", p.name(), " is not active"));
    if (gid.empty() || p.link_layer != "Ethernet") continue;
    // RoCE: the GID index picks the address family and RoCE version of the port's GID table.
    const std::string type = read_line(cat(sysfs_dir, "/", p.device, "/ports/", p.port, "/gid_attrs/types/", gid));
    if (type.empty())
      result.problems.push_back(cat("NCCL_IB_GID_INDEX=", gid, ": port ", p.name(), " has no GID type at that index"));
    else if (type != "RoCE v2")
      result.notes.push_back(cat("NCCL_IB_GID_INDEX=", gid, " on ", p.name(), " is ", type, ", not RoCE v2 (show_gids)"));
  }
  result.notes.push_back(cat("NCCL_IB_HCA=", spec, " -> ", port_names(matched)));
}

std::vector<HostInterface> host_interfaces() {
  std::vector<HostInterface> out;
  ifaddrs* list = nullptr;
  LLMTRAIN_CHECK(::getifaddrs(&list) == 0, "getifaddrs: ", std::strerror(errno));
  for (ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET) continue;
    char text[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr, text, sizeof text);
    out.push_back({a->ifa_name, text, (a->ifa_flags & IFF_UP) != 0});
  }
  ::freeifaddrs(list);
  return out;
}

std::vector<std::string> nccl_interface_matches(const std::string& spec, const std::vector<HostInterface>& ifs) {
  std::string s = spec;
  const bool exclude = !s.empty() && s[0] == '^';
  if (exclude) s.erase(0, 1);
  const bool exact = !s.empty() && s[0] == '=';
  if (exact) s.erase(0, 1);
  const auto items = split_commas(s);
  std::vector<std::string> out;
  for (const auto& i : ifs) {
    bool hit = false;
    for (const auto& item : items) hit = hit || (exact ? i.name == item : starts_with(i.name, item));
    // NCCL never picks loopback unless it is asked for it by name.
    if (hit != exclude && !(exclude && i.name == "lo")) out.push_back(i.name);
  }
  return out;
}

CheckResult check_network(const dist::Runtime& runtime, int timeout_ms) {
  CheckResult result;
  const auto ifs = host_interfaces();
  auto chosen = check_ompi_include("OMPI_MCA_btl_tcp_if_include", ifs, result);
  check_ompi_include("OMPI_MCA_oob_tcp_if_include", ifs, result);
  const auto nccl = check_nccl_ifname(ifs, result);
  check_nccl_sockets(result);
  check_ib("/sys/class/infiniband", result);
  const std::string source = !chosen.empty() ? "OMPI_MCA_btl_tcp_if_include" : "NCCL_SOCKET_IFNAME";
  if (chosen.empty()) chosen = nccl;
  for (const auto& c : chosen)
    if (c.name == "lo" && runtime.node_count() > 1)
      result.problems.push_back(cat(source, " selects lo, the loopback interface: ranks on ", runtime.node_count(),
                                    " nodes cannot reach each other over it"));

  // The ring: every rank listens on its chosen address; the addresses are exchanged over MPI.
  std::string mine, error;
  int listener = -1, port = 0;
  if (!chosen.empty() && chosen.front().up) {
    listener = open_listener(chosen.front().address, port, error);
    if (listener < 0) result.problems.push_back(cat("cannot listen on ", chosen.front().name, " ", chosen.front().address, ": ", error));
    else mine = cat(chosen.front().name, " ", chosen.front().address, " ", port);
  }
  const auto all = dist::all_gather_bytes(runtime, mine);
  const int w = runtime.size(), r = runtime.rank();
  const std::string& next = all[static_cast<size_t>((r + 1) % w)];
  const std::string& prev = all[static_cast<size_t>((r + w - 1) % w)];
  if (w > 1 && !mine.empty() && !next.empty()) {
    std::istringstream in(next);
    std::string name, address;
    int next_port = 0;
    in >> name >> address >> next_port;
    error = connect_to(address, next_port, r, timeout_ms);
    if (!error.empty())
      result.problems.push_back(cat("cannot reach rank ", (r + 1) % w, " at ", address, ":", next_port, " (its ", name,
                                    ") from ", chosen.front().name, " ", chosen.front().address, ": ", error));
  }
  if (w > 1 && !mine.empty() && !prev.empty()) {
    error = accept_from(listener, (r + w - 1) % w, timeout_ms);
    if (!error.empty()) result.problems.push_back(cat("on ", chosen.front().name, " ", chosen.front().address, ": ", error));
  }
  if (listener >= 0) ::close(listener);
  if (env("OMPI_MCA_btl_tcp_if_include").empty() && env("NCCL_SOCKET_IFNAME").empty())
    result.notes.push_back("interfaces: neither OMPI_MCA_btl_tcp_if_include nor NCCL_SOCKET_IFNAME is set; MPI and NCCL "
                           "choose their own (jobscripts/env/ sets them)");
  else if (w > 1 && !mine.empty())
    // No addresses in the note: identical notes of all ranks print as one line.
    result.notes.push_back(cat("interfaces: ", source, " -> ", chosen.front().name, "; every rank reached the next over it"));
  return result;
}

}  // namespace llmtrain::job
