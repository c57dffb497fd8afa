// Failures across processes, and what is not one: a rank killed with SIGKILL in the middle of an
// all-reduce, ranks that finish a reduce and leave before its root, and strangers knocking on
// the rendezvous port while real ranks meet.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "src/bootstrap/launch_env.h"
#include "src/bootstrap/unique_id.h"
#include "src/bootstrap/wire.h"
#include "tests/api/process_ranks.h"
#include "weft/weft.h"

namespace weft::test {
namespace {

using Clock = std::chrono::steady_clock;

struct KilledCase {
  const char* transport;
  bool allToAll;  // large all-to-alls (single copy over shm, turned on) instead of all-reduces
  bool mapped = false;  // all-reduces in weftMemAlloc memory, which go mapped over shm
};

void PrintTo(const KilledCase& c, std::ostream* os) {
  *os << c.transport << (c.allToAll ? " all_to_all" : " all_reduce") << (c.mapped ? " mapped" : "");
}

class KilledRank : public ::testing::TestWithParam<KilledCase> {};

// Rank 3 dies partway through a stream of large collectives. Every other rank must get an error
// well within the timeout (3 s here), and weftCommAbort must then free everything.
TEST_P(KilledRank, PeersGetAnErrorWithinTheTimeout) {
  const int timeoutSec = 3;
  const KilledCase c = GetParam();
  auto results = runProcesses(
      4,
      {{"WEFT_TRANSPORT", c.transport},
       {"WEFT_TIMEOUT", std::to_string(timeoutSec)},
       {"WEFT_SHM_SINGLE_COPY_BYTES", "1M"},
       {"WEFT_SHM_SINGLE_COPY_MAX_BYTES", "0"},
       {"WEFT_SHM_SINGLE_COPY_COLLS", "allgather,broadcast,alltoall"},
       {"WEFT_SHM_SINGLE_COPY_MAX_RANKS", "0"},
       {"WEFT_SHM_SINGLE_COPY", "always"}},
      [&](int rank) {
        weftComm_t comm = nullptr;
        ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess) << weftGetLastError(nullptr);
        std::vector<float> heap(4u << 20, 1.0f), out(heap.size());
        float* buf = heap.data();
        const size_t count = heap.size();
        void* shared = nullptr;
        if (c.mapped) {
          ASSERT_EQ(weftMemAlloc(&shared, count * sizeof(float)), weftSuccess);
          buf = static_cast<float*>(shared);
          std::fill(buf, buf + count, 1.0f);
        }
        if (rank == 3) {
          std::thread([] {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            raise(SIGKILL);
          }).detach();
        }
        weftResult_t r = weftSuccess;
        Clock::time_point failedAt;
        Clock::time_point lastStart;
        for (int i = 0; i < 100000 && r == weftSuccess; ++i) {
          lastStart = Clock::now();
          r = c.allToAll ? weftAllToAll(buf, out.data(), count / 4, weftFloat32, comm, nullptr)
                         : weftAllReduce(buf, buf, count, weftFloat32, weftMax, comm, nullptr);
        }
        failedAt = Clock::now();
        ASSERT_NE(r, weftSuccess) << "all-reduce kept succeeding without rank 3";
        EXPECT_TRUE(r == weftRemoteError || r == weftTimeout) << weftGetErrorString(r);
        double waited = std::chrono::duration<double>(failedAt - lastStart).count();
        EXPECT_LT(waited, timeoutSec + 2.0) << weftGetLastError(comm);
        fprintf(stderr, "rank %d: error after %.2f s: %s\n", rank, waited, weftGetLastError(comm));
        weftResult_t async = weftSuccess;
        EXPECT_EQ(weftCommGetAsyncError(comm, &async), weftSuccess);
        EXPECT_NE(async, weftSuccess);
        EXPECT_EQ(weftCommAbort(comm), weftSuccess);
        EXPECT_EQ(weftMemFree(shared), weftSuccess);
      },
      60);
  ASSERT_EQ(results.size(), 4u);
  for (int r = 0; r < 3; ++r)
    EXPECT_TRUE(results[r].ok()) << results[r].describe();
  EXPECT_EQ(results[3].signal, SIGKILL) << results[3].describe();
}

INSTANTIATE_TEST_SUITE_P(Transports, KilledRank,
                         ::testing::Values(KilledCase{"shm", false}, KilledCase{"tcp", false},
                                           KilledCase{"shm", true}, KilledCase{"shm", false, true}),
                         [](const auto& info) {
                           return std::string(info.param.transport) +
                                  (info.param.allToAll ? "AllToAll" : "AllReduce") +
                                  (info.param.mapped ? "Mapped" : "");
                         });

int connectTo(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  for (int tries = 0; tries < 500; ++tries) {
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0) return fd;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  close(fd);
  return -1;
}

// A rank of a run whose rendezvous strangers may disturb: it joins, after lateMs, and the ranks'
// all-reduce proves they met.
void joinAndSum(int rank, int nranks, int lateMs) {
  if (lateMs > 0) std::this_thread::sleep_for(std::chrono::milliseconds(lateMs));
  weftComm_t comm = nullptr;
  ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess) << weftGetLastError(nullptr);
  int v = rank + 1;
  ASSERT_EQ(weftAllReduce(&v, &v, 1, weftInt32, weftSum, comm, nullptr), weftSuccess);
  EXPECT_EQ(v, nranks * (nranks + 1) / 2);
  EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
}

// While rank 3 is late, strangers connect to the rendezvous: one sends garbage, one a
// well-formed hello with the wrong secret, one says nothing and hangs up. The real ranks still
// form a communicator that works.
TEST(Strangers, RefusedWhileTheCommunicatorForms) {
  const int port = freeLoopbackPort();
  // The strangers are a process of their own, so the test forks its ranks without threads.
  pid_t strangers = fork();
  if (strangers == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    int garbage = connectTo(port);
    if (garbage < 0) _exit(2);
    std::vector<char> junk(300, 'x');
    if (write(garbage, junk.data(), junk.size()) <= 0) _exit(3);
    // Looks like a hello (right magic and version) but carries a wrong secret.
    int liar = connectTo(port);
    std::vector<uint8_t> hello(400, 0);
    const uint32_t magic = 0x57465442u;
    const uint16_t version = 1;
    memcpy(hello.data(), &magic, 4);
    memcpy(hello.data() + 4, &version, 2);
    if (write(liar, hello.data(), hello.size()) <= 0) _exit(4);
    int silent = connectTo(port);
    close(silent);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    close(garbage);
    close(liar);
    _exit(0);
  }
  auto results = runProcesses(
      4, {{"WEFT_COMM_ID", "127.0.0.1:" + std::to_string(port)}},
      [](int rank) { joinAndSum(rank, 4, rank == 3 ? 1500 : 0); }, 60);
  int status = 0;
  waitpid(strangers, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the strangers could not connect";
  expectAllOk(results);
}

// A hundred idle connections reach the rendezvous before the ranks: they are held at once and
// dropped when silent too long or too many, so the ranks still meet well within WEFT_TIMEOUT
// (served one by one, 2 s each, they took 200 s).
TEST(Strangers, IdleConnectionsDoNotHoldTheRendezvous) {
  const int port = freeLoopbackPort();
  int connected[2];
  ASSERT_EQ(pipe(connected), 0);
  pid_t strangers = fork();
  if (strangers == 0) {
    std::vector<int> idle;
    for (int i = 0; i < 100; ++i) {
      int fd = connectTo(port);
      if (fd < 0) _exit(2);
      idle.push_back(fd);
    }
    if (write(connected[1], "y", 1) != 1) _exit(3);
    pause();  // holds them, silent, past WEFT_TIMEOUT, until killed
    _exit(0);
  }
  close(connected[1]);
  const auto start = std::chrono::steady_clock::now();
  auto results = runProcesses(
      3, {{"WEFT_COMM_ID", "127.0.0.1:" + std::to_string(port)}, {"WEFT_TIMEOUT", "6"}},
      [](int rank) { joinAndSum(rank, 3, rank > 0 ? 700 : 0); }, 60);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(6));
  char byte = 0;
  EXPECT_EQ(read(connected[0], &byte, 1), 1) << "the strangers could not connect";
  close(connected[0]);
  kill(strangers, SIGKILL);
  waitpid(strangers, nullptr, 0);
  expectAllOk(results);
}

// This process's peak resident memory (VmHWM), in bytes.
size_t peakResidentBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoul(line.substr(6)) * 1024;
  }
  return 0;
}

// Two thousand strangers, up to 100 at a time, reach the rendezvous while rank 1 is late: silent
// ones, one byte, half a hello, a whole hello with a wrong secret and absurd sizes, 64K of
// garbage. Rank 0's root refuses them all without crashing and without its memory growing with
// them, and the ranks still meet.
TEST(Strangers, AFloodOfGarbageLeavesTheRootUpAndItsMemoryBounded) {
  const int port = freeLoopbackPort();
  pid_t strangers = fork();
  if (strangers == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    RootHello liar;
    liar.nranks = INT32_MAX;
    liar.rank = -7;
    const std::vector<char> garbage(64 << 10, '\x7f');
    std::vector<int> open;
    for (int i = 0; i < 2000; ++i) {
      int fd = connectTo(port);
      if (fd < 0) _exit(2);
      ssize_t ignored = 0;
      switch (i % 5) {
        case 0:
          break;  // silent
        case 1:
          ignored = write(fd, "W", 1);
          break;
        case 2:
          ignored = write(fd, &liar, sizeof(liar) / 2);
          break;
        case 3:
          ignored = write(fd, &liar, sizeof(liar));
          break;
        default:
          ignored = send(fd, garbage.data(), garbage.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      }
      (void)ignored;
      open.push_back(fd);
      if (open.size() == 100) {
        for (int o : open)
          close(o);
        open.clear();
      }
    }
    _exit(0);
  }
  auto results = runProcesses(
      2, {{"WEFT_COMM_ID", "127.0.0.1:" + std::to_string(port)}, {"WEFT_TRANSPORT", "tcp"}},
      [](int rank) {
        const size_t before = peakResidentBytes();
        joinAndSum(rank, 2, rank == 1 ? 2500 : 0);
        if (rank == 0) {
          const size_t grew = peakResidentBytes() - before;
          EXPECT_LT(grew, 48u << 20) << "rank 0's peak memory grew by " << (grew >> 20) << " MiB";
        }
      },
      60);
  int status = 0;
  waitpid(strangers, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "the strangers stopped at step " << WEXITSTATUS(status);
  expectAllOk(results);
}

// Without WEFT_COMM_SECRET the secret is derived from the job, which strangers may know: rank 0
// says so at WARN, once.
TEST(Strangers, ADerivedSecretIsWarnedAbout) {
  const RankFiles logs("derived-secret");
  auto results = runProcesses(2, {{"WEFT_COMM_SECRET", ""}, {"WEFT_DEBUG", "WARN"}}, [&](int rank) {
    logs.route(rank);
    weftComm_t comm = nullptr;
    ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess) << weftGetLastError(nullptr);
    EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
  });
  expectAllOk(results);
  const std::string log0 = logs.take(0);
  EXPECT_NE(log0.find("WARN no WEFT_COMM_SECRET for ranks from WEFT_RANK/WEFT_WORLD_SIZE"),
            std::string::npos)
      << log0;
  EXPECT_EQ(logs.take(1).find("WEFT_COMM_SECRET"), std::string::npos);
}

// weftCommAbort from another thread ends a call that waits on a peer with one code and message,
// whatever the transport: the abort, not a link closed under it.
class LocalAbort : public ::testing::TestWithParam<const char*> {};

TEST_P(LocalAbort, EndsAWaitingCallWithTheSameError) {
  auto results = runProcesses(2, {{"WEFT_TRANSPORT", GetParam()}}, [](int rank) {
    weftComm_t comm = nullptr;
    ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess);
    if (rank == 1) {  // never joins the all-reduce; leaves once rank 0 has given up
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      weftCommAbort(comm);
      return;
    }
    std::thread aborter([comm] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      EXPECT_EQ(weftCommAbort(comm), weftSuccess);
    });
    std::vector<int32_t> v(1000, 1);
    const weftResult_t r =
        weftAllReduce(v.data(), v.data(), v.size(), weftInt32, weftSum, comm, nullptr);
    const std::string error = weftGetLastError(nullptr);
    aborter.join();
    EXPECT_EQ(r, weftInvalidUsage) << error;
    EXPECT_NE(error.find("aborted by weftCommAbort in this process"), std::string::npos) << error;
  });
  expectAllOk(results);
}

INSTANTIATE_TEST_SUITE_P(Transports, LocalAbort, ::testing::Values("shm", "tcp"));

// The state of the listening TCP socket on `port` in /proc/net/tcp: its local address in the
// kernel's hex ("0100007F" for 127.0.0.1, "00000000" for every interface), or "" if none.
std::string listeningAddress(int port) {
  std::ifstream tcp("/proc/net/tcp");
  std::string line;
  char portHex[8];
  snprintf(portHex, sizeof(portHex), ":%04X", port);
  while (std::getline(tcp, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state;
    fields >> slot >> local >> remote >> state;
    if (state == "0A" && local.size() > 5 && local.substr(local.size() - 5) == portHex) {
      return local.substr(0, local.size() - 5);
    }
  }
  return "";
}

// A stranger that knows the launch's secret (derived from WEFT_COMM_ID where the launcher sets
// none) claims INT_MAX ranks, then 3: rank 0's root refuses both as it refuses a wrong secret,
// instead of allocating for INT_MAX ranks or failing every rank's init. The root listens on the
// address WEFT_COMM_ID gave (127.0.0.1), not on every interface.
TEST(Strangers, AHelloClaimingAnotherWorldSizeIsRefused) {
  const int port = freeLoopbackPort();
  const std::string commId = "127.0.0.1:" + std::to_string(port);
  const std::string secret = "00112233445566778899aabbccddeeff";
  pid_t stranger = fork();
  if (stranger == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const std::map<std::string, std::string> vars = {{"WEFT_RANK", "1"},
                                                     {"WEFT_WORLD_SIZE", "2"},
                                                     {"WEFT_COMM_ID", commId},
                                                     {"WEFT_COMM_SECRET", secret}};
    LaunchInfo info;
    UniqueIdData id;
    auto env = [&vars](const char* name) -> std::optional<std::string> {
      auto it = vars.find(name);
      return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
    if (!readLaunchInfo(env, &info).ok() || !idFromLaunchInfo(info, &id).ok()) _exit(2);
    std::vector<int> sockets;
    for (int32_t nranks : {INT32_MAX, 3}) {
      int fd = connectTo(port);
      if (fd < 0) _exit(3);
      RootHello hello;
      hello.secret = id.secret;
      hello.commTag = id.commTag;
      hello.rank = 1;
      hello.nranks = nranks;
      if (write(fd, &hello, sizeof(hello)) != static_cast<ssize_t>(sizeof(hello))) _exit(4);
      sockets.push_back(fd);
    }
    if (listeningAddress(port) != "0100007F") _exit(5);
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    for (int fd : sockets)
      close(fd);
    _exit(0);
  }
  auto results = runProcesses(
      2, {{"WEFT_COMM_ID", commId}, {"WEFT_COMM_SECRET", secret}},
      [](int rank) { joinAndSum(rank, 2, rank == 1 ? 1200 : 0); }, 60);
  int status = 0;
  waitpid(stranger, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "the stranger failed at step " << WEXITSTATUS(status)
      << " (5: the root does not listen on 127.0.0.1 only)";
  expectAllOk(results);
}

// Ranks whose part of a reduce is done may return and destroy their communicator while the
// root still waits for a late rank: the root still gets the right sum. Both the direct path
// (small counts, data in slots) and the staged one (large counts) are run.
class EarlyFinishers : public ::testing::TestWithParam<size_t> {};

TEST_P(EarlyFinishers, MayDestroyTheirCommunicatorBeforeTheRootIsDone) {
  const size_t count = GetParam();
  const int root = 3;
  const int late = 2;
  auto results = runProcesses(
      4, {{"WEFT_TRANSPORT", "shm"}, {"WEFT_TIMEOUT", "20"}},
      [&](int rank) {
        weftComm_t comm = nullptr;
        ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess) << weftGetLastError(nullptr);
        std::vector<int32_t> in(count);
        for (size_t i = 0; i < count; ++i)
          in[i] = static_cast<int32_t>(i % 1000) * (rank + 1);
        std::vector<int32_t> out(count, -1);
        if (rank == late) std::this_thread::sleep_for(std::chrono::milliseconds(500));
        ASSERT_EQ(weftReduce(in.data(), out.data(), count, weftInt32, weftSum, root, comm, nullptr),
                  weftSuccess)
            << weftGetLastError(comm);
        if (rank == root) {
          // 1 + 2 + 3 + 4 times each rank's base value.
          for (size_t i = 0; i < count; ++i)
            ASSERT_EQ(out[i], static_cast<int32_t>(i % 1000) * 10) << "element " << i;
        }
        EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
      },
      60);
  expectAllOk(results);
}

INSTANTIATE_TEST_SUITE_P(DirectAndStaged, EarlyFinishers, ::testing::Values(16, 1u << 20));

// A mapped broadcast's non-roots read the root's input and owe nobody else: they may return and
// destroy their communicator while a late one still reads, and the root waits for that one only.
TEST(EarlyFinishers, OfAMappedBroadcastMayDestroyTheirCommunicator) {
  const size_t count = 1u << 20;
  const int root = 0;
  const int late = 2;
  auto results = runProcesses(
      4, {{"WEFT_TRANSPORT", "shm"}, {"WEFT_TIMEOUT", "20"}, {"WEFT_ALGO", "mapped"}},
      [&](int rank) {
        weftComm_t comm = nullptr;
        ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess) << weftGetLastError(nullptr);
        void* memory = nullptr;
        ASSERT_EQ(weftMemAlloc(&memory, count * sizeof(int32_t)), weftSuccess);
        auto* data = static_cast<int32_t*>(memory);
        for (size_t i = 0; i < count; ++i)
          data[i] = rank == root ? static_cast<int32_t>(i % 1000) : -1;
        if (rank == late) std::this_thread::sleep_for(std::chrono::milliseconds(500));
        ASSERT_EQ(weftBroadcast(data, data, count, weftInt32, root, comm, nullptr), weftSuccess)
            << weftGetLastError(comm);
        for (size_t i = 0; i < count; ++i)
          ASSERT_EQ(data[i], static_cast<int32_t>(i % 1000)) << "rank " << rank << " element " << i;
        if (rank != root && rank != late) EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
        EXPECT_EQ(weftMemFree(memory), weftSuccess);
        if (rank == root || rank == late) EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
      },
      60);
  expectAllOk(results);
}

}  // namespace
}  // namespace weft::test
