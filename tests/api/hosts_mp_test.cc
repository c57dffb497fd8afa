// Ranks as separate hosts (WEFT_HOSTID) and rendezvous over IPv6: the communicator picks shm
// within a host and tcp across, and collectives stay right over the mix.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "tests/api/process_ranks.h"
#include "weft/weft.h"

namespace weft::test {
namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// All-reduce and all-to-all across the communicator, checked exactly.
void exchangeAndCheck(weftComm_t comm, int rank, int n) {
  std::vector<int64_t> v(100003);
  std::iota(v.begin(), v.end(), rank);
  ASSERT_EQ(weftAllReduce(v.data(), v.data(), v.size(), weftInt64, weftSum, comm, nullptr),
            weftSuccess)
      << weftGetLastError(comm);
  for (size_t i = 0; i < v.size(); i += 997) {
    ASSERT_EQ(v[i], static_cast<int64_t>(n * i + n * (n - 1) / 2));
  }
  std::vector<int32_t> out(static_cast<size_t>(n) * 1000);
  std::vector<int32_t> in(out.size());
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = rank * 100000 + static_cast<int32_t>(i);
  ASSERT_EQ(weftAllToAll(out.data(), in.data(), 1000, weftInt32, comm, nullptr), weftSuccess);
  for (int p = 0; p < n; ++p) {
    EXPECT_EQ(in[static_cast<size_t>(p) * 1000 + 5], p * 100000 + rank * 1000 + 5);
  }
}

TEST(Hosts, HostIdsSplitShmAndTcp) {
  const std::string log = "/tmp/weft-hosts-test." + std::to_string(getpid());
  auto results =
      runProcesses(4, {{"WEFT_DEBUG", "INFO"}, {"WEFT_DEBUG_SUBSYS", "INIT"}}, [&](int rank) {
        // Ranks 0,1 on host "a", ranks 2,3 on host "b".
        setenv("WEFT_HOSTID", rank < 2 ? "a" : "b", 1);
        setenv("WEFT_DEBUG_FILE", (log + "." + std::to_string(rank)).c_str(), 1);
        weftComm_t comm = nullptr;
        ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess) << weftGetLastError(nullptr);
        exchangeAndCheck(comm, rank, 4);
        EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
      });
  expectAllOk(results);
  for (int r = 0; r < 4; ++r) {
    std::string path = log + "." + std::to_string(r);
    std::string text = readFile(path);
    EXPECT_NE(text.find("shm to 1 peers, tcp to 2 peers"), std::string::npos) << text;
    unlink(path.c_str());
  }
}

// Ranks 0 and 2 on host "a", 1 and 3 on host "b": the ring order groups hosts (0 2 1 3), and
// with WEFT_HIERARCHY=on all-reduce and broadcast run in tiers. Each simulated host reads its
// own topology file. Results must not depend on any of it.
class Tiers : public ::testing::TestWithParam<const char*> {};

TEST_P(Tiers, AcrossSimulatedHosts) {
  const std::string log = "/tmp/weft-tiers-test." + std::to_string(getpid());
  const std::string data = WEFT_TOPOLOGY_DATA;
  auto results = runProcesses(
      4,
      {{"WEFT_DEBUG", "INFO"}, {"WEFT_DEBUG_SUBSYS", "INIT,COLL"}, {"WEFT_HIERARCHY", GetParam()}},
      [&](int rank) {
        const bool hostA = rank % 2 == 0;
        setenv("WEFT_HOSTID", hostA ? "a" : "b", 1);
        setenv("WEFT_TOPO_FILE",
               (data + (hostA ? "/cisco-ucs-2s-cpuonly-usnic.hwloc.xml"
                              : "/rccl-model-8x-gfx906-pcie-2nic.nccl.xml"))
                   .c_str(),
               1);
        setenv("WEFT_DEBUG_FILE", (log + "." + std::to_string(rank)).c_str(), 1);
        weftComm_t comm = nullptr;
        ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess) << weftGetLastError(nullptr);
        exchangeAndCheck(comm, rank, 4);
        for (size_t count : {size_t{5}, size_t{4099}, size_t{300001}}) {
          for (int root : {0, 3}) {
            std::vector<double> b(count, rank == root ? 1.5 * root + 2 : -1.0);
            ASSERT_EQ(weftBroadcast(b.data(), b.data(), count, weftFloat64, root, comm, nullptr),
                      weftSuccess)
                << weftGetLastError(comm);
            EXPECT_EQ(b.front(), 1.5 * root + 2);
            EXPECT_EQ(b.back(), 1.5 * root + 2);
          }
          std::vector<float> v(count, float(rank + 1));
          std::vector<float> out(count);
          ASSERT_EQ(weftAllReduce(v.data(), out.data(), count, weftFloat32, weftSum, comm, nullptr),
                    weftSuccess);
          EXPECT_EQ(out.front(), 10.0f);
          EXPECT_EQ(out.back(), 10.0f);
          std::vector<int32_t> all(count * 4);
          std::vector<int32_t> mine(count, rank * 7);
          ASSERT_EQ(weftAllGather(mine.data(), all.data(), count, weftInt32, comm, nullptr),
                    weftSuccess);
          for (int r = 0; r < 4; ++r)
            EXPECT_EQ(all[r * count + count / 2], r * 7);
        }
        EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
      });
  expectAllOk(results);
  for (int r = 0; r < 4; ++r) {
    std::string path = log + "." + std::to_string(r);
    std::string text = readFile(path);
    EXPECT_NE(text.find("ring order 0 2 1 3 over 2 host(s)"), std::string::npos) << text;
    bool tiered = text.find("tiered") != std::string::npos;
    EXPECT_EQ(tiered, std::string(GetParam()) == "on") << text;
    unlink(path.c_str());
  }
}

INSTANTIATE_TEST_SUITE_P(Hierarchy, Tiers, ::testing::Values("on", "off"));

bool haveIpv6Loopback() {
  int fd = socket(AF_INET6, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_addr = in6addr_loopback;
  bool ok = bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
  close(fd);
  return ok;
}

int freeIpv6Port() {
  int fd = socket(AF_INET6, SOCK_STREAM, 0);
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_addr = in6addr_loopback;
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin6_port);
}

TEST(Hosts, Ipv6RendezvousAndTcp) {
  if (!haveIpv6Loopback()) GTEST_SKIP() << "no IPv6 loopback on this machine";
  const std::string commId = "[::1]:" + std::to_string(freeIpv6Port());
  auto results =
      runProcesses(3, {{"WEFT_COMM_ID", commId}, {"WEFT_TRANSPORT", "tcp"}}, [](int rank) {
        weftComm_t comm = nullptr;
        ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess) << weftGetLastError(nullptr);
        exchangeAndCheck(comm, rank, 3);
        EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
      });
  expectAllOk(results);
}

}  // namespace
}  // namespace weft::test
