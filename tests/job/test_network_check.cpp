// The preflight's interface rules: NCCL_SOCKET_IFNAME's prefix / "=" / "^" matching on a synthetic host,
// and NCCL_IB_HCA's on a fake /sys/class/infiniband tree (devices, ports, states, RoCE GID types), with
// the problems check_ib reports for each way a setting can be wrong.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "network_check.hpp"

namespace llmtrain::job {
namespace {

std::vector<std::string> port_names(const std::vector<IbPort>& ports) {
  std::vector<std::string> out;
  for (const auto& p : ports) out.push_back(p.name());
  return out;
}

const std::vector<HostInterface> kHost = {
    {"lo", "127.0.0.1", true}, {"eth0", "10.0.0.1", true}, {"eth10", "10.1.0.1", true}, {"docker0", "172.17.0.1", true}};

TEST(NcclSocketIfname, PrefixMatchesEveryInterfaceThatStartsWithIt) {
  EXPECT_EQ(nccl_interface_matches("eth", kHost), (std::vector<std::string>{"eth0", "eth10"}));
  EXPECT_EQ(nccl_interface_matches("eth1", kHost), (std::vector<std::string>{"eth10"}));
}

TEST(NcclSocketIfname, EqualsMakesNamesExact) {
  EXPECT_EQ(nccl_interface_matches("=eth0", kHost), (std::vector<std::string>{"eth0"}));
  EXPECT_TRUE(nccl_interface_matches("=eth", kHost).empty());
}

TEST(NcclSocketIfname, CaretExcludesAndNeverSelectsLoopback) {
  EXPECT_EQ(nccl_interface_matches("^docker", kHost), (std::vector<std::string>{"eth0", "eth10"}));
  EXPECT_EQ(nccl_interface_matches("^=eth10,docker0", kHost), (std::vector<std::string>{"eth0"}));
  EXPECT_EQ(nccl_interface_matches("lo", kHost), (std::vector<std::string>{"lo"}));
}

class FakeSysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("llmtrain-fake-ib-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    port("mlx5_0", 1, "4: ACTIVE", "InfiniBand");
    port("mlx5_1", 1, "4: ACTIVE", "Ethernet");
    port("mlx5_10", 1, "1: DOWN", "InfiniBand");
    file("mlx5_1/ports/1/gid_attrs/types/3", "RoCE v2");
    file("mlx5_1/ports/1/gid_attrs/types/1", "IB/RoCE v1");
    ::unsetenv("NCCL_IB_HCA");
    ::unsetenv("NCCL_IB_GID_INDEX");
  }
  void TearDown() override {
    std::filesystem::remove_all(dir_);
    ::unsetenv("NCCL_IB_HCA");
    ::unsetenv("NCCL_IB_GID_INDEX");
  }
  void file(const std::string& rel, const std::string& text) {
    const auto path = dir_ / rel;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text << "\n";
  }
  void port(const std::string& dev, int n, const std::string& state, const std::string& layer) {
    file(dev + "/ports/" + std::to_string(n) + "/state", state);
    file(dev + "/ports/" + std::to_string(n) + "/link_layer", layer);
  }
  CheckResult check(const char* hca, const char* gid = nullptr) {
    ::setenv("NCCL_IB_HCA", hca, 1);
    if (gid) ::setenv("NCCL_IB_GID_INDEX", gid, 1);
    CheckResult r;
    check_ib(dir_.string(), r);
    return r;
  }
  std::filesystem::path dir_;
};

TEST_F(FakeSysfs, ListsPortsWithStateAndLinkLayer) {
  const auto ports = ib_ports(dir_.string());
  ASSERT_EQ(port_names(ports), (std::vector<std::string>{"mlx5_0:1", "mlx5_10:1", "mlx5_1:1"}));
  EXPECT_TRUE(ports[0].active);
  EXPECT_FALSE(ports[1].active);
  EXPECT_EQ(ports[2].link_layer, "Ethernet");
  EXPECT_TRUE(ib_ports((dir_ / "absent").string()).empty());
}

TEST_F(FakeSysfs, HcaPrefixTrapAndExactNames) {
  const auto ports = ib_ports(dir_.string());
  EXPECT_EQ(port_names(nccl_hca_matches("mlx5_1", ports)), (std::vector<std::string>{"mlx5_10:1", "mlx5_1:1"}));
  EXPECT_EQ(port_names(nccl_hca_matches("=mlx5_1", ports)), (std::vector<std::string>{"mlx5_1:1"}));
  EXPECT_EQ(port_names(nccl_hca_matches("=mlx5_0:1,mlx5_1:1", ports)), (std::vector<std::string>{"mlx5_0:1", "mlx5_1:1"}));
  EXPECT_TRUE(nccl_hca_matches("=mlx5_0:2", ports).empty());
  EXPECT_EQ(port_names(nccl_hca_matches("^=mlx5_10", ports)), (std::vector<std::string>{"mlx5_0:1", "mlx5_1:1"}));
}

TEST_F(FakeSysfs, ExactActivePortsPass) {
  const auto r = check("=mlx5_0:1,mlx5_1:1", "3");
  EXPECT_TRUE(r.problems.empty()) << r.problems.front();
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_EQ(r.notes[0], "NCCL_IB_HCA==mlx5_0:1,mlx5_1:1 -> mlx5_0:1, mlx5_1:1");
}

TEST_F(FakeSysfs, ProblemsNameTheSettingAndWhatTheHostHas) {
  auto r = check("=mlx5_7");
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0], "NCCL_IB_HCA==mlx5_7: no RDMA port matches (this host has: mlx5_0:1, mlx5_10:1 (not active), mlx5_1:1)");
  r = check("mlx5_1");  // the prefix also takes mlx5_10, whose port is down
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0], "NCCL_IB_HCA=mlx5_1: port mlx5_10:1 is not active");
  r = check("=mlx5_1", "5");
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0], "NCCL_IB_GID_INDEX=5: port mlx5_1:1 has no GID type at that index");
  r = check("=mlx5_1", "1");
  EXPECT_TRUE(r.problems.empty());
  EXPECT_EQ(r.notes[0], "NCCL_IB_GID_INDEX=1 on mlx5_1:1 is IB/RoCE v1, not RoCE v2 (show_gids)");
}

TEST_F(FakeSysfs, NothingToCheckWithoutTheSetting) {
  CheckResult r;
  check_ib(dir_.string(), r);
  EXPECT_TRUE(r.problems.empty());
  EXPECT_TRUE(r.notes.empty());
}

}  // namespace
}  // namespace llmtrain::job
