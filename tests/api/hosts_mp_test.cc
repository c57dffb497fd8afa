// Ranks as separate hosts (WEFT_HOSTID) and rendezvous over IPv6: the communicator picks shm
// within a host and tcp across, and collectives stay right over the mix.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <numeric>
#include <string>
#include <vector>

#include "tests/api/process_ranks.h"
#include "weft/weft.h"

namespace weft::test {
namespace {

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

// A rank's whole life in most tests here: init from the environment, exchangeAndCheck, destroy.
void initExchangeAndDestroy(int rank, int n) {
  weftComm_t comm = nullptr;
  ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess) << weftGetLastError(nullptr);
  exchangeAndCheck(comm, rank, n);
  EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
}

TEST(Hosts, HostIdsSplitShmAndTcp) {
  const RankFiles logs("hosts-test");
  auto results =
      runProcesses(4, {{"WEFT_DEBUG", "INFO"}, {"WEFT_DEBUG_SUBSYS", "INIT"}}, [&](int rank) {
        // Ranks 0,1 on host "a", ranks 2,3 on host "b".
        setenv("WEFT_HOSTID", rank < 2 ? "a" : "b", 1);
        logs.route(rank);
        initExchangeAndDestroy(rank, 4);
      });
  expectAllOk(results);
  for (int r = 0; r < 4; ++r) {
    std::string text = logs.take(r);
    EXPECT_NE(text.find("shm to 1 peers, tcp to 2 peers"), std::string::npos) << text;
    EXPECT_NE(text.find("idle waits yield"), std::string::npos) << text;
  }
}

// Idle waits spin where every rank has a CPU and no peer is behind a socket, and yield where
// one is: a spinning receiver holds the CPU the kernel needs to move its tcp bytes.
TEST(Hosts, SocketPeersMakeIdleWaitsYield) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  if (CPU_COUNT(&allowed) < 2) GTEST_SKIP() << "2 ranks on one CPU block either way";
  const RankFiles logs("spin-test");
  for (const char* transport : {"shm", "tcp"}) {
    auto results = runProcesses(
        2, {{"WEFT_DEBUG", "INFO"}, {"WEFT_DEBUG_SUBSYS", "INIT"}, {"WEFT_TRANSPORT", transport}},
        [&](int rank) {
          logs.route(rank);
          initExchangeAndDestroy(rank, 2);
        });
    expectAllOk(results);
    const char* expected = transport[0] == 's' ? "idle waits spin" : "idle waits yield";
    for (int r = 0; r < 2; ++r) {
      std::string text = logs.take(r);
      EXPECT_NE(text.find(expected), std::string::npos) << transport << ": " << text;
    }
  }
}

// WEFT_WAIT overrides the choice, and the collectives still complete under each policy.
TEST(Hosts, WeftWaitChoosesTheIdleWait) {
  const RankFiles logs("wait-test");
  for (const char* wait : {"spin", "yield", "block"}) {
    auto results = runProcesses(
        2, {{"WEFT_DEBUG", "INFO"}, {"WEFT_DEBUG_SUBSYS", "INIT"}, {"WEFT_WAIT", wait}},
        [&](int rank) {
          logs.route(rank);
          initExchangeAndDestroy(rank, 2);
        });
    expectAllOk(results);
    for (int r = 0; r < 2; ++r) {
      std::string text = logs.take(r);
      EXPECT_NE(text.find(std::string("idle waits ") + wait), std::string::npos)
          << wait << ": " << text;
    }
  }
}

// Ranks 0 and 2 on host "a", 1 and 3 on host "b": the ring order groups hosts (0 2 1 3), and
// with WEFT_HIERARCHY=on all-reduce and broadcast run in tiers. Each simulated host reads its
// own topology file. Results must not depend on any of it.
class Tiers : public ::testing::TestWithParam<const char*> {};

TEST_P(Tiers, AcrossSimulatedHosts) {
  const RankFiles logs("tiers-test");
  const std::string data = WEFT_TOPOLOGY_DATA;
  auto results = runProcesses(
      4,
      // Built-in link figures: measured ones would make auto's choice depend on the load.
      {{"WEFT_DEBUG", "INFO"},
       {"WEFT_DEBUG_SUBSYS", "INIT,COLL"},
       {"WEFT_HIERARCHY", GetParam()},
       {"WEFT_CALIBRATE", "0"}},
      [&](int rank) {
        const bool hostA = rank % 2 == 0;
        setenv("WEFT_HOSTID", hostA ? "a" : "b", 1);
        setenv("WEFT_TOPO_FILE",
               (data + (hostA ? "/cisco-ucs-2s-cpuonly-usnic.hwloc.xml"
                              : "/rccl-model-8x-gfx906-pcie-2nic.nccl.xml"))
                   .c_str(),
               1);
        logs.route(rank);
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
                    weftSuccess)
              << weftGetLastError(comm);
          EXPECT_EQ(out.front(), 10.0f);
          EXPECT_EQ(out.back(), 10.0f);
          std::vector<int32_t> all(count * 4);
          std::vector<int32_t> mine(count, rank * 7);
          ASSERT_EQ(weftAllGather(mine.data(), all.data(), count, weftInt32, comm, nullptr),
                    weftSuccess)
              << weftGetLastError(comm);
          for (int r = 0; r < 4; ++r)
            EXPECT_EQ(all[r * count + count / 2], r * 7);
        }
        EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
      });
  expectAllOk(results);
  for (int r = 0; r < 4; ++r) {
    std::string text = logs.take(r);
    EXPECT_NE(text.find("ring order 0 2 1 3 over 2 host(s)"), std::string::npos) << text;
    bool tiered = text.find("tiered") != std::string::npos;
    // Across hosts over tcp, tiers cost less at every size these calls use, so auto takes them
    // (priced with the built-in figures).
    EXPECT_EQ(tiered, std::string(GetParam()) != "off") << text;
  }
}

INSTANTIATE_TEST_SUITE_P(Hierarchy, Tiers, ::testing::Values("on", "off", "auto"));

bool haveTwoCpus() {
  cpu_set_t set;
  return sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_ISSET(0, &set) && CPU_ISSET(1, &set);
}

// One host whose topology file puts CPU 0 and CPU 1 on different NUMA nodes, each with its own
// NIC. Ranks 0 and 2 run on CPU 1, ranks 1 and 3 on CPU 0: the ring takes NUMA node 0's ranks
// first (1 3 0 2), each rank names the NIC of its node, and ring schedules over that order
// (direct and staged paths off) give exact results.
TEST(Placement, RingOrderFollowsNumaNodesOfTheTopology) {
  if (!haveTwoCpus()) GTEST_SKIP() << "needs CPUs 0 and 1";
  const RankFiles logs("numa-test");
  auto results = runProcesses(4,
                              {{"WEFT_DEBUG", "INFO"},
                               {"WEFT_DEBUG_SUBSYS", "INIT,COLL"},
                               {"WEFT_TOPO_FILE", WEFT_API_DATA "/two-numa-1gbe.nccl.xml"},
                               {"WEFT_DIRECT_BYTES", "0"},
                               {"WEFT_SHM_STAGING_BYTES", "0"}},
                              [&](int rank) {
                                bindToCpu(rank % 2 == 0 ? 1 : 0);
                                logs.route(rank);
                                initExchangeAndDestroy(rank, 4);
                              });
  expectAllOk(results);
  for (int r = 0; r < 4; ++r) {
    std::string text = logs.take(r);
    EXPECT_NE(text.find("ring order 1 3 0 2 over 1 host(s)"), std::string::npos) << text;
    const char* nic = r % 2 == 0 ? "NIC eth3 (0.12 GB/s) closest to NUMA node 1"
                                 : "NIC eth2 (0.12 GB/s) closest to NUMA node 0";
    EXPECT_NE(text.find(nic), std::string::npos) << text;
    EXPECT_EQ(text.find("direct"), std::string::npos) << text;
  }
}

// Two simulated hosts whose topology files give their NICs 1 or 400 Gb/s: links between hosts
// are priced at the slower of tcp's built-in figure (calibration off) and the NICs, so with 1 Gb/s
// NICs all-reduce runs in tiers at every size (WEFT_HIERARCHY=auto) and the model predicts the time
// 1 Gb/s allows.
class NicPricing : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(NicPricing, LinksBetweenHostsFollowTheNics) {
  const RankFiles logs("nic-test");
  const std::string file = std::string(WEFT_API_DATA "/") + GetParam().first;
  auto results = runProcesses(
      4,
      {{"WEFT_DEBUG", "INFO"},
       {"WEFT_DEBUG_SUBSYS", "INIT,COLL"},
       {"WEFT_TOPO_FILE", file},
       {"WEFT_CALIBRATE", "0"}},
      [&](int rank) {
        setenv("WEFT_HOSTID", rank % 2 == 0 ? "a" : "b", 1);
        logs.route(rank);
        weftComm_t comm = nullptr;
        ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess) << weftGetLastError(nullptr);
        for (size_t count : {size_t{3}, size_t{300001}}) {
          std::vector<float> v(count, float(rank + 1));
          ASSERT_EQ(weftAllReduce(v.data(), v.data(), count, weftFloat32, weftSum, comm, nullptr),
                    weftSuccess)
              << weftGetLastError(comm);
          EXPECT_EQ(v.front(), 10.0f);
          EXPECT_EQ(v.back(), 10.0f);
        }
        EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
      });
  expectAllOk(results);
  const bool slow = std::string(GetParam().first).find("1gbe") != std::string::npos;
  for (int r = 0; r < 4; ++r) {
    std::string text = logs.take(r);
    EXPECT_NE(text.find(std::string("links between hosts priced at ") + GetParam().second),
              std::string::npos)
        << text;
    size_t big = text.find("(300001 x float32 sum, ");
    ASSERT_NE(big, std::string::npos) << text;
    std::string line = text.substr(big, text.find('\n', big) - big);
    if (slow) {
      EXPECT_NE(text.find("(3 x float32 sum, tiered"), std::string::npos) << text;
      EXPECT_NE(line.find("tiered"), std::string::npos) << line;
      // 1.2 MB over one 1 Gb/s link between the leaders takes 9.6 ms at least.
      double us = std::stod(line.substr(line.find("predicted ") + 10));
      EXPECT_GT(us, 9600.0) << line;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Hierarchy, NicPricing,
                         ::testing::Values(std::make_pair("two-numa-1gbe.nccl.xml", "0.125 GB/s"),
                                           std::make_pair("two-numa-400g.nccl.xml", "2.000 GB/s")));

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
  socklen_t len = sizeof(a);
  const bool bound = bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
                     getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
  close(fd);
  return bound ? ntohs(a.sin6_port) : 0;  // port 0 fails the rendezvous with a clear error
}

TEST(Hosts, Ipv6RendezvousAndTcp) {
  if (!haveIpv6Loopback()) GTEST_SKIP() << "no IPv6 loopback on this machine";
  const std::string commId = "[::1]:" + std::to_string(freeIpv6Port());
  auto results = runProcesses(3, {{"WEFT_COMM_ID", commId}, {"WEFT_TRANSPORT", "tcp"}},
                              [](int rank) { initExchangeAndDestroy(rank, 3); });
  expectAllOk(results);
}

}  // namespace
}  // namespace weft::test
