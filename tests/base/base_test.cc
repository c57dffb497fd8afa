// The base layer and the bootstrap's pure parts: byte sizes, addresses, interface selection,
// launcher environments, unique ids, the waiting primitives, statuses and the ring queue.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <string>

#include "src/base/env.h"
#include "src/base/ring_queue.h"
#include "src/base/socket.h"
#include "src/base/wait.h"
#include "src/bootstrap/launch_env.h"
#include "src/bootstrap/unique_id.h"

namespace weft {
namespace {

TEST(Env, ParseBytes) {
  EXPECT_EQ(parseBytes("4096"), 4096u);
  EXPECT_EQ(parseBytes("4K"), 4096u);
  EXPECT_EQ(parseBytes("2m"), 2u << 20);
  EXPECT_EQ(parseBytes("1G"), 1u << 30);
  EXPECT_FALSE(parseBytes(""));
  EXPECT_FALSE(parseBytes("12Q"));
  EXPECT_FALSE(parseBytes("-5"));
  EXPECT_FALSE(parseBytes("K"));
}

// WEFT_SHM_STREAM_BYTES sets the threshold for oversubscribed ranks too, unless it is bad.
TEST(Env, StreamBytesSetBoth) {
  EnvReport report;
  unsetenv("WEFT_SHM_STREAM_BYTES");
  EnvConfig c = parseEnv(&report);
  EXPECT_EQ(c.shmStreamBytes, 8u << 20);
  EXPECT_EQ(c.shmStreamBytesOversubscribed, 1u << 20);
  setenv("WEFT_SHM_STREAM_BYTES", "2M", 1);
  c = parseEnv(&report);
  EXPECT_EQ(c.shmStreamBytes, 2u << 20);
  EXPECT_EQ(c.shmStreamBytesOversubscribed, 2u << 20);
  EXPECT_TRUE(report.problems.empty());
  setenv("WEFT_SHM_STREAM_BYTES", "lots", 1);
  c = parseEnv(&report);
  EXPECT_EQ(c.shmStreamBytes, 8u << 20);
  EXPECT_EQ(c.shmStreamBytesOversubscribed, 1u << 20);
  EXPECT_EQ(report.problems.size(), 1u);
  unsetenv("WEFT_SHM_STREAM_BYTES");
}

TEST(Env, SocketPaceBytes) {
  EnvReport report;
  unsetenv("WEFT_SOCKET_PACE_BYTES");
  EXPECT_EQ(parseEnv(&report).socketPaceBytes, 512u << 10);
  setenv("WEFT_SOCKET_PACE_BYTES", "64K", 1);
  EXPECT_EQ(parseEnv(&report).socketPaceBytes, 64u << 10);
  setenv("WEFT_SOCKET_PACE_BYTES", "0", 1);
  EXPECT_EQ(parseEnv(&report).socketPaceBytes, 0u);
  EXPECT_TRUE(report.problems.empty());
  unsetenv("WEFT_SOCKET_PACE_BYTES");
}

// A bad value of any kind is a problem that names the variable, its value and what is allowed
// (checkEnv turns it into the init error); the setting keeps its default.
TEST(Env, BadValuesNameWhatIsAllowed) {
  struct Case {
    const char* name;
    const char* value;
    const char* allowed;
  };
  for (const Case& c : {
           Case{"WEFT_TRANSPORT", "ib", "is not one of auto, shm, tcp"},
           Case{"WEFT_TIMEOUT", "abc", "is not a number of seconds"},
           Case{"WEFT_DEBUG", "LOUD", "is not one of VERSION, WARN, INFO, TRACE"},
           Case{"WEFT_DEBUG_SUBSYS", "INIT,FOO", "names 'FOO', which is not one of INIT, COLL"},
           Case{"WEFT_SHM_RING_BYTES", "lots", "is not a byte size"},
           Case{"WEFT_NSOCKS_PERPEER", "0", "is not an integer from 1 to 16"},
           Case{"WEFT_NSOCKS_PERPEER", "17", "is not an integer from 1 to 16"},
           Case{"WEFT_TRACE_BUFFER", "-1", "is not an integer of at least 0"},
           Case{"WEFT_CALIBRATE", "yes", "is not one of 0, 1"},
       }) {
    SCOPED_TRACE(c.name);
    EnvReport report;
    const EnvConfig before = parseEnv(&report);  // ctest's environment may set some
    setenv(c.name, c.value, 1);
    const EnvConfig config = parseEnv(&report);
    unsetenv(c.name);
    ASSERT_EQ(report.problems.size(), 1u);
    EXPECT_NE(report.problems[0].find(std::string(c.name) + "=" + c.value + " " + c.allowed),
              std::string::npos)
        << report.problems[0];
    // The bad one is at its default; the others are as they were.
    const EnvConfig defaults;
    const bool transport = std::string(c.name) == "WEFT_TRANSPORT";
    const bool timeout = std::string(c.name) == "WEFT_TIMEOUT";
    EXPECT_EQ(config.transport, transport ? defaults.transport : before.transport);
    EXPECT_EQ(config.timeoutMs, timeout ? defaults.timeoutMs : before.timeoutMs);
  }
}

// NCCL's levels and subsystem lists are accepted in any case; every variable set is reported.
TEST(Env, GoodLoggingValuesAndTheSetList) {
  setenv("WEFT_DEBUG", "version", 1);
  setenv("WEFT_DEBUG_SUBSYS", "^net,Coll,", 1);
  EnvReport report;
  const EnvConfig config = parseEnv(&report);
  unsetenv("WEFT_DEBUG");
  unsetenv("WEFT_DEBUG_SUBSYS");
  EXPECT_TRUE(report.problems.empty());
  EXPECT_EQ(config.debugLevel, "version");
  for (const std::pair<std::string, std::string>& v :
       {std::pair<std::string, std::string>{"WEFT_DEBUG", "version"},
        std::pair<std::string, std::string>{"WEFT_DEBUG_SUBSYS", "^net,Coll,"}}) {
    EXPECT_NE(std::find(report.set.begin(), report.set.end(), v), report.set.end()) << v.first;
  }
}

// Variables with a few allowed values: a bad one is a problem and leaves the default.
TEST(Env, ChoicesAreChecked) {
  struct Case {
    const char* name;
    std::string EnvConfig::*field;
    const char* byDefault;
    const char* valid;
  };
  for (const Case& c :
       {Case{"WEFT_SHM_STAGE_STORES", &EnvConfig::shmStageStores, "auto", "streamed"},
        Case{"WEFT_SHM_SINGLE_COPY", &EnvConfig::shmSingleCopy, "auto", "never"}}) {
    SCOPED_TRACE(c.name);
    EnvReport report;
    unsetenv(c.name);
    EXPECT_EQ(parseEnv(&report).*c.field, c.byDefault);
    setenv(c.name, c.valid, 1);
    EXPECT_EQ(parseEnv(&report).*c.field, c.valid);
    EXPECT_TRUE(report.problems.empty());
    setenv(c.name, "nt", 1);
    EXPECT_EQ(parseEnv(&report).*c.field, c.byDefault);
    EXPECT_EQ(report.problems.size(), 1u);
    unsetenv(c.name);
  }
}

TEST(SockAddr, ParseAndPrint) {
  SockAddr a;
  ASSERT_TRUE(SockAddr::parse("127.0.0.1:5000", &a).ok());
  EXPECT_EQ(a.family(), AF_INET);
  EXPECT_EQ(a.port(), 5000);
  EXPECT_TRUE(a.isLoopback());
  EXPECT_EQ(a.toString(), "127.0.0.1:5000");
  ASSERT_TRUE(SockAddr::parse("[::1]:6000", &a).ok());
  EXPECT_EQ(a.family(), AF_INET6);
  EXPECT_EQ(a.toString(), "[::1]:6000");
  EXPECT_TRUE(a.isLoopback());
  ASSERT_TRUE(SockAddr::parse("localhost:7", &a).ok());
  EXPECT_EQ(a.port(), 7);
  EXPECT_FALSE(SockAddr::parse("127.0.0.1:port", &a).ok());
  EXPECT_FALSE(SockAddr::parse("[::1", &a).ok());
  EXPECT_FALSE(SockAddr::parse("no-such-host.invalid:80", &a).ok());
}

TEST(Interfaces, SelectionLikeNccl) {
  std::vector<NetInterface> list;
  ASSERT_TRUE(findInterfaces("=lo", "AF_INET", &list).ok());
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].name, "lo");
  EXPECT_TRUE(list[0].address.isLoopback());
  ASSERT_TRUE(findInterfaces("^lo", "", &list).ok() || list.empty());
  for (const auto& ni : list)
    EXPECT_NE(ni.name, "lo");
  Status s = findInterfaces("nosuchif", "", &list);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("nosuchif"), std::string::npos);
  // The default never fails: loopback is the last resort.
  ASSERT_TRUE(findInterfaces("", "AF_INET", &list).ok());
  EXPECT_FALSE(list.empty());
}

TEST(Sockets, ConnectRetriesUntilDeadline) {
  SockAddr a;
  ASSERT_TRUE(SockAddr::parse("127.0.0.1:1", &a).ok());
  Socket s;
  auto start = std::chrono::steady_clock::now();
  Status st = connectSocket(a, Deadline::after(200), nullptr, &s);
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(st.code(), weftTimeout) << st.message();
  EXPECT_GE(took, std::chrono::milliseconds(190));
  EXPECT_LT(took, std::chrono::seconds(10));  // generous: the machine may be busy
  AbortFlag abort{true};
  st = connectSocket(a, Deadline::after(5000), &abort, &s);
  EXPECT_NE(st.code(), weftSuccess);
}

using Vars = std::map<std::string, std::string>;

Status launch(const Vars& vars, LaunchInfo* info) {
  return readLaunchInfo(
      [&](const char* name) -> std::optional<std::string> {
        auto it = vars.find(name);
        if (it == vars.end()) return std::nullopt;
        return it->second;
      },
      info);
}

TEST(LaunchEnv, WeftRun) {
  LaunchInfo info;
  ASSERT_TRUE(launch({{"WEFT_RANK", "2"},
                      {"WEFT_WORLD_SIZE", "4"},
                      {"WEFT_COMM_ID", "10.0.0.1:29500"},
                      {"WEFT_COMM_SECRET", "00112233445566778899aabbccddeeff"}},
                     &info)
                  .ok());
  EXPECT_EQ(info.rank, 2);
  EXPECT_EQ(info.size, 4);
  EXPECT_EQ(info.launcher, "WEFT_RANK/WEFT_WORLD_SIZE (weft-run or by hand)");
  EXPECT_EQ(info.rootAddress, "10.0.0.1:29500");
  EXPECT_TRUE(info.secretFromLauncher);
  EXPECT_EQ(info.secret[0], 0x00);
  EXPECT_EQ(info.secret[15], 0xff);
}

TEST(LaunchEnv, OpenMpiSlurmTorchrun) {
  LaunchInfo info;
  ASSERT_TRUE(launch({{"OMPI_COMM_WORLD_RANK", "1"},
                      {"OMPI_COMM_WORLD_SIZE", "8"},
                      {"WEFT_COMM_ID", "node1:1234"}},
                     &info)
                  .ok());
  EXPECT_EQ(info.launcher, "Open MPI");
  EXPECT_EQ(info.rank, 1);
  EXPECT_FALSE(info.secretFromLauncher);

  ASSERT_TRUE(launch({{"SLURM_PROCID", "3"},
                      {"SLURM_NTASKS", "16"},
                      {"SLURM_JOB_ID", "4242"},
                      {"SLURM_STEP_NODELIST", "gpu[07-10],cpu1"}},
                     &info)
                  .ok());
  EXPECT_EQ(info.launcher, "Slurm");
  EXPECT_EQ(info.rootAddress, "gpu07:" + std::to_string(20000 + 4242));

  ASSERT_TRUE(launch({{"RANK", "0"},
                      {"WORLD_SIZE", "2"},
                      {"MASTER_ADDR", "10.1.1.1"},
                      {"MASTER_PORT", "29500"}},
                     &info)
                  .ok());
  EXPECT_EQ(info.launcher, "torchrun");
  EXPECT_EQ(info.rootAddress, "10.1.1.1:29501");

  // Two ranks of one job derive the same secret without being told one.
  LaunchInfo other;
  ASSERT_TRUE(launch({{"RANK", "1"},
                      {"WORLD_SIZE", "2"},
                      {"MASTER_ADDR", "10.1.1.1"},
                      {"MASTER_PORT", "29500"}},
                     &other)
                  .ok());
  EXPECT_EQ(info.secret, other.secret);
}

TEST(LaunchEnv, Errors) {
  LaunchInfo info;
  Status s = launch({}, &info);
  EXPECT_EQ(s.code(), weftInvalidUsage);
  EXPECT_NE(s.message().find("WEFT_RANK"), std::string::npos);
  s = launch({{"WEFT_RANK", "4"}, {"WEFT_WORLD_SIZE", "4"}, {"WEFT_COMM_ID", "h:1"}}, &info);
  EXPECT_EQ(s.code(), weftInvalidArgument);
  // Half a pair is named, so that a typo in a launch script is found.
  s = launch({{"WEFT_RANK", "1"}, {"WEFT_COMM_ID", "h:1"}}, &info);
  EXPECT_EQ(s.code(), weftInvalidUsage);
  EXPECT_NE(s.message().find("; WEFT_RANK is set but WEFT_WORLD_SIZE is not"), std::string::npos)
      << s.message();
  s = launch({{"SLURM_NTASKS", "2"}}, &info);
  EXPECT_NE(s.message().find("; SLURM_NTASKS is set but SLURM_PROCID is not"), std::string::npos)
      << s.message();
  s = launch({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "2"}}, &info);
  EXPECT_NE(s.message().find("WEFT_COMM_ID"), std::string::npos);
  s = launch({{"WEFT_RANK", "0"},
              {"WEFT_WORLD_SIZE", "1"},
              {"WEFT_COMM_ID", "h:1"},
              {"WEFT_COMM_SECRET", "xyz"}},
             &info);
  EXPECT_EQ(s.code(), weftInvalidArgument);
  // Integers are read strictly: no wrapping, no trailing text.
  for (const char* size : {"4294967298", "2x", "-9223372036854775809"}) {
    s = launch({{"WEFT_RANK", "0"}, {"WEFT_WORLD_SIZE", size}, {"WEFT_COMM_ID", "h:1"}}, &info);
    EXPECT_EQ(s.code(), weftInvalidArgument) << size;
    EXPECT_NE(s.message().find(std::string("WEFT_WORLD_SIZE=") + size), std::string::npos)
        << s.message();
  }
  s = launch(
      {{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "99999999999"}},
      &info);
  EXPECT_NE(s.message().find("MASTER_PORT=99999999999"), std::string::npos) << s.message();
  s = launch({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "65535"}},
             &info);
  EXPECT_NE(s.message().find("MASTER_PORT=65535 is not a port"), std::string::npos) << s.message();
}

// A rendezvous address without a port says so, before any name is looked up.
TEST(LaunchEnv, AddressWithoutAPort) {
  for (const char* address : {"nohostport", "[::1]", "::1"}) {
    LaunchInfo info;
    ASSERT_TRUE(
        launch({{"WEFT_RANK", "0"}, {"WEFT_WORLD_SIZE", "2"}, {"WEFT_COMM_ID", address}}, &info)
            .ok());
    UniqueIdData id;
    const Status s = idFromLaunchInfo(info, &id);
    EXPECT_EQ(s.code(), weftInvalidArgument) << address;
    EXPECT_NE(s.message().find(std::string("rendezvous address '") + address +
                               "' needs a port: host:port"),
              std::string::npos)
        << s.message();
  }
}

TEST(LaunchEnv, FirstSlurmHost) {
  EXPECT_EQ(firstSlurmHost("node1"), "node1");
  EXPECT_EQ(firstSlurmHost("a,b"), "a");
  EXPECT_EQ(firstSlurmHost("n[3-5]"), "n3");
  EXPECT_EQ(firstSlurmHost("n[03,07]"), "n03");
  EXPECT_EQ(firstSlurmHost("x,n[1-2]"), "x");
}

TEST(UniqueId, RoundTripAndRejection) {
  UniqueIdData data;
  SockAddr a;
  ASSERT_TRUE(SockAddr::parse("192.168.1.2:4321", &a).ok());
  data.root = WireAddress::from(a);
  for (size_t i = 0; i < data.secret.size(); ++i)
    data.secret[i] = static_cast<uint8_t>(i * 7);
  data.commTag = 0x1234567890abcdefull;
  weftUniqueId id;
  encodeUniqueId(data, &id);
  UniqueIdData back;
  ASSERT_TRUE(decodeUniqueId(id, &back).ok());
  EXPECT_EQ(back.root.toSockAddr().toString(), "192.168.1.2:4321");
  EXPECT_EQ(back.secret, data.secret);
  EXPECT_EQ(back.commTag, data.commTag);
  // A single flipped bit is caught.
  id.internal[20] ^= 1;
  EXPECT_EQ(decodeUniqueId(id, &back).code(), weftInvalidArgument);
}

TEST(Backoff, SpinsThenSleeps) {
  Backoff b;
  auto start = std::chrono::steady_clock::now();
  while (!b.sleeping())
    b.pause();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  for (int i = 0; i < 10; ++i)
    b.pause();
  EXPECT_TRUE(b.sleeping());
  b.reset();
  EXPECT_FALSE(b.sleeping());
  EXPECT_FALSE(Deadline::never().expired());
  EXPECT_TRUE(Deadline::after(1).finite());
}

// Pauses a collective's idle wait until it would block; the rounds it spun and yielded.
std::pair<int, int> progressPhases(IdleWait how) {
  Backoff b = Backoff::forProgress(how);
  int spun = 0;
  int yielded = 0;
  while (!b.sleeping()) {
    ++(b.spinning() ? spun : yielded);
    b.pause();
  }
  return {spun, yielded};
}

// Spinning long only where peers share memory and every rank has a core; yielding long where
// peers are behind sockets; blocking almost at once where ranks outnumber cores.
TEST(Backoff, ProgressWaitsSpinYieldOrBlock) {
  const auto [spinSpun, spinYielded] = progressPhases(IdleWait::kSpin);
  const auto [yieldSpun, yieldYielded] = progressPhases(IdleWait::kYield);
  const auto [blockSpun, blockYielded] = progressPhases(IdleWait::kBlock);
  EXPECT_GE(spinSpun, 1000);
  EXPECT_LE(yieldSpun, 100);
  EXPECT_GE(yieldYielded, 10 * spinYielded);
  EXPECT_LE(blockSpun + blockYielded, 100);
  EXPECT_STREQ(idleWaitName(IdleWait::kYield), "yield");
}

// A long spin phase asks once, early, whether to go on (Communicator::sharesCpuWithPeer);
// short ones never do, and a wait that made progress asks again.
TEST(Backoff, SpinCheckComesOnceEarlyInLongSpins) {
  for (IdleWait how : {IdleWait::kSpin, IdleWait::kYield, IdleWait::kBlock}) {
    Backoff b = Backoff::forProgress(how);
    int checks = 0;
    int at = -1;
    for (int round = 0; !b.sleeping(); ++round) {
      if (b.atSpinCheck()) {
        ++checks;
        at = round;
      }
      b.pause();
    }
    EXPECT_EQ(checks, how == IdleWait::kSpin ? 1 : 0) << idleWaitName(how);
    if (how == IdleWait::kSpin) {
      EXPECT_EQ(at, static_cast<int>(Backoff::kSpinCheckRound));
    }
  }
  Backoff b = Backoff::forProgress(IdleWait::kSpin);
  for (uint32_t i = 0; i < Backoff::kSpinCheckRound; ++i)
    b.pause();
  EXPECT_TRUE(b.atSpinCheck());
  b.skipSpin();  // what a wait does when a peer shares its CPU
  EXPECT_FALSE(b.spinning());
  EXPECT_FALSE(b.atSpinCheck());
  b.reset();
  for (uint32_t i = 0; i < Backoff::kSpinCheckRound; ++i)
    b.pause();
  EXPECT_TRUE(b.atSpinCheck());
}

TEST(Status, CopiesMovesAndAddsContext) {
  Status ok;
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.code(), weftSuccess);
  EXPECT_EQ(ok.message(), "");
  EXPECT_TRUE(Status(weftSuccess, "ignored").ok());  // success never carries a message
  EXPECT_TRUE(ok.withContext("while x").ok());

  Status err(weftTimeout, "peer 3 is silent");
  Status copy = err;  // a deep copy: the original keeps its message
  EXPECT_EQ(copy.code(), weftTimeout);
  EXPECT_EQ(copy.message(), "peer 3 is silent");
  Status moved = std::move(copy);
  EXPECT_EQ(moved.message(), "peer 3 is silent");
  EXPECT_EQ(err.message(), "peer 3 is silent");
  Status wrapped = err.withContext("all_reduce #4");
  EXPECT_EQ(wrapped.code(), weftTimeout);
  EXPECT_EQ(wrapped.message(), "all_reduce #4: peer 3 is silent");
  copy = wrapped;
  EXPECT_EQ(copy.message(), wrapped.message());
  copy = ok;
  EXPECT_TRUE(copy.ok());
}

TEST(RingQueue, FirstInFirstOutAcrossWrapsAndGrowth) {
  // Pushes and pops in uneven steps, so the front wraps and the array grows with items on both
  // sides of the wrap; std::deque is the reference.
  RingQueue<std::string> ring;
  std::deque<std::string> reference;
  int next = 0;
  for (int step = 0; step < 200; ++step) {
    for (int i = 0; i < step % 7; ++i) {
      ring.push(std::to_string(next));
      reference.push_back(std::to_string(next++));
    }
    for (int i = 0; i < step % 5 && !reference.empty(); ++i) {
      ASSERT_EQ(ring.pop(), reference.front());
      reference.pop_front();
    }
    ASSERT_EQ(ring.size(), reference.size());
    ASSERT_EQ(ring.empty(), reference.empty());
  }
  while (!reference.empty()) {
    ASSERT_EQ(ring.pop(), reference.front());
    reference.pop_front();
  }
  EXPECT_TRUE(ring.empty());
}

TEST(RingQueue, KeepsItsRoom) {
  RingQueue<int> ring;
  for (int i = 0; i < 100; ++i)
    ring.push(i);
  const size_t room = ring.capacity();
  EXPECT_GE(room, 100u);
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 37; ++i)
      EXPECT_EQ(ring.pop(), (round * 37 + i) % 100) << round;
    for (int i = 0; i < 37; ++i)
      ring.push((round * 37 + 100 + i) % 100);
    EXPECT_EQ(ring.capacity(), room);
  }
}

}  // namespace
}  // namespace weft
