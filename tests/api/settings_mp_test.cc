// Settings and logs as a user meets them: a bad value of a WEFT_* variable stops init with an
// error that names it and what is allowed; WEFT_DEBUG=VERSION or INFO starts the log with the
// version banner (and, at INFO, the settings the environment changed); the COLL log names the
// algorithms passed over, and grouped sends and receives leave a P2P trace line. Each case runs
// in fresh processes, since a process reads its environment once.
#include <gtest/gtest.h>

#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "tests/api/process_ranks.h"
#include "weft/weft.h"

namespace weft::test {
namespace {

struct BadSetting {
  const char* name;
  const char* value;
  const char* expected;  // what the error must say
};

class BadSettings : public ::testing::TestWithParam<BadSetting> {};

TEST_P(BadSettings, StopInitNamingTheVariableAndTheAllowedValues) {
  const BadSetting bad = GetParam();
  auto results = runProcesses(1, {{bad.name, bad.value}}, [&](int) {
    weftComm_t comm = nullptr;
    EXPECT_EQ(weftCommInitFromEnv(&comm), weftInvalidArgument);
    const std::string error = weftGetLastError(nullptr);
    EXPECT_NE(error.find(std::string(bad.name) + "=" + bad.value + " " + bad.expected),
              std::string::npos)
        << error;
    weftUniqueId id;
    EXPECT_EQ(weftGetUniqueId(&id), weftInvalidArgument);
  });
  expectAllOk(results);
}

INSTANTIATE_TEST_SUITE_P(
    Env, BadSettings,
    ::testing::Values(BadSetting{"WEFT_TRANSPORT", "ib", "is not one of auto, shm, tcp"},
                      BadSetting{"WEFT_TIMEOUT", "abc", "is not a number of seconds"},
                      BadSetting{"WEFT_DEBUG", "LOUD", "is not one of VERSION, WARN, INFO, TRACE"},
                      BadSetting{"WEFT_DEBUG_SUBSYS", "FOO", "names 'FOO', which is not one of"},
                      BadSetting{"WEFT_CHUNK_BYTES", "1MB", "is not a byte size"},
                      BadSetting{"WEFT_WAIT", "poll", "is not one of auto, spin, yield, block"},
                      BadSetting{"WEFT_WAIT_SLICE_US", "50",
                                 "is not 0 or a number of microseconds from 100 to 100000"},
                      BadSetting{"WEFT_DEBUG_FILE", "/nonexistent/weft/log.%p",
                                 "names a file in /nonexistent/weft/, which is not a directory"},
                      BadSetting{"WEFT_TRACE_DUMP", "/nonexistent/weft/dump-",
                                 "names a file in /nonexistent/weft/, which is not a directory"}));

// A network interface the machine lacks is the user's setting to mend, and the error lists
// the interfaces there are.
TEST(BadSocketInterface, IsAnInvalidArgumentListingTheInterfacesThatAreUp) {
  auto results = runProcesses(
      2, {{"WEFT_TRANSPORT", "tcp"}, {"WEFT_SOCKET_IFNAME", "nosuch0"}, {"WEFT_TIMEOUT", "20"}},
      [&](int) {
        weftComm_t comm = nullptr;
        EXPECT_EQ(weftCommInitFromEnv(&comm), weftInvalidArgument);
        const std::string error = weftGetLastError(nullptr);
        EXPECT_NE(error.find("no network interface matches WEFT_SOCKET_IFNAME='nosuch0' (up: lo"),
                  std::string::npos)
            << error;
      });
  expectAllOk(results);
}

std::string banner() {
  std::ostringstream s;
  s << "WEFT INFO Weft " << WEFT_MAJOR << "." << WEFT_MINOR << "." << WEFT_PATCH << " (hwloc ";
  return s.str();
}

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

void allReduceOne(weftComm_t comm, int /*rank*/) {
  float v = 1;
  ASSERT_EQ(weftAllReduce(&v, &v, 1, weftFloat, weftSum, comm, nullptr), weftSuccess);
  EXPECT_EQ(v, 2);
}

// Rank 0's log for a run of 2 ranks that make `calls` with these settings.
std::string logOfRank0(const std::string& level, const EnvList& more,
                       void (*calls)(weftComm_t, int) = allReduceOne) {
  const RankFiles logs("settings-test");
  EnvList env = {{"WEFT_DEBUG", level}};
  env.insert(env.end(), more.begin(), more.end());
  auto results = runProcesses(2, env, [&](int rank) {
    logs.route(rank);
    weftComm_t comm = nullptr;
    ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess) << weftGetLastError(nullptr);
    calls(comm, rank);
    EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
  });
  expectAllOk(results);
  logs.take(1);
  return logs.take(0);
}

TEST(VersionBanner, VersionLevelPrintsItAlone) {
  const std::vector<std::string> lines = linesOf(logOfRank0("VERSION", {{"WEFT_TIMEOUT", "30"}}));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find(banner()), std::string::npos) << lines[0];
}

TEST(VersionBanner, InfoStartsWithItAndTheEnvironmentsSettings) {
  const std::vector<std::string> lines =
      linesOf(logOfRank0("INFO", {{"WEFT_TIMEOUT", "30"}, {"WEFT_TRANSPORT", "tcp"}}));
  ASSERT_GE(lines.size(), 3u);
  EXPECT_NE(lines[0].find(banner()), std::string::npos) << lines[0];
  std::string text;
  for (const std::string& line : lines)
    text += line + "\n";
  EXPECT_NE(text.find("WEFT_TIMEOUT set by environment to 30\n"), std::string::npos) << text;
  EXPECT_NE(text.find("WEFT_TRANSPORT set by environment to tcp\n"), std::string::npos) << text;
  // Addresses are given with the port actually bound, or without one.
  EXPECT_EQ(text.find("listens on 127.0.0.1:0"), std::string::npos) << text;
  const size_t tcp = text.find("tcp: rank 0 listens on 127.0.0.1:");
  ASSERT_NE(tcp, std::string::npos) << text;
  EXPECT_GT(std::stoi(text.substr(tcp + strlen("tcp: rank 0 listens on 127.0.0.1:"))), 0);
  EXPECT_EQ(text.find(banner(), text.find(banner()) + 1), std::string::npos)
      << "the banner came twice:\n"
      << text;
}

// The COLL log gives the algorithm chosen and the ones passed over, with their predictions.
TEST(Logs, CollectivePlansNameTheAlgorithmsPassedOver) {
  const std::string log = logOfRank0(
      "INFO", {{"WEFT_TRANSPORT", "tcp"}, {"WEFT_DEBUG_SUBSYS", "COLL"}, {"WEFT_ALGO", "ring"}},
      [](weftComm_t comm, int) {
        std::vector<float> v(1 << 16, 1.0f);
        ASSERT_EQ(weftAllReduce(v.data(), v.data(), v.size(), weftFloat, weftSum, comm, nullptr),
                  weftSuccess);
        EXPECT_EQ(v[12345], 2.0f);
      });
  bool found = false;
  for (const std::string& line : linesOf(log)) {
    if (line.find("all_reduce") == std::string::npos) continue;
    if (line.find("predicted") == std::string::npos) continue;
    found = true;
    EXPECT_NE(line.find("ring"), std::string::npos) << line;
    // The others come fastest first, an order the measured links decide.
    const size_t over = line.find("; over ");
    ASSERT_NE(over, std::string::npos) << line;
    for (const char* other : {"tree ", "rd "}) {
      const size_t at = line.find(other, over);
      ASSERT_NE(at, std::string::npos) << other << " in " << line;
      EXPECT_NE(line.find(" us (excluded by WEFT_ALGO)", at), std::string::npos) << line;
    }
  }
  EXPECT_TRUE(found) << "no plan line for the all-reduce:\n" << log;
}

// A group of sends and receives leaves a P2P trace line naming each call.
TEST(Logs, GroupedSendsAndReceivesLeaveATraceLine) {
  const std::string log =
      logOfRank0("TRACE", {{"WEFT_DEBUG_SUBSYS", "P2P"}}, [](weftComm_t comm, int rank) {
        int out[8] = {rank, rank, rank, rank, rank, rank, rank, rank}, in[8] = {};
        const int peer = 1 - rank;
        ASSERT_EQ(weftGroupStart(), weftSuccess);
        ASSERT_EQ(weftSend(out, 8, weftInt32, peer, comm, nullptr), weftSuccess);
        ASSERT_EQ(weftRecv(in, 8, weftInt32, peer, comm, nullptr), weftSuccess);
        ASSERT_EQ(weftGroupEnd(), weftSuccess) << weftGetLastError(comm);
        EXPECT_EQ(in[7], peer);
      });
  EXPECT_NE(log.find("send to rank 1 (8 x int32), recv from rank 1 (8 x int32)"), std::string::npos)
      << log;
}

}  // namespace
}  // namespace weft::test
