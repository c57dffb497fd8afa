// weft-run end to end: starts the probe program as ranks and checks what they and we see.
#include <sched.h>
#include <signal.h>

#include <algorithm>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/tools/process.h"
#include "tools/weft_run/binding.h"

namespace weft::test {
namespace {

constexpr double kDeadline = 30;  // no test should come near; a hang fails instead of stalling

ProcessResult weftRun(std::vector<std::string> args, const OnOutput& onOutput = {}) {
  args.insert(args.begin(), WEFT_RUN_PATH);
  return runProcess(args, kDeadline, onOutput);
}

size_t countOf(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

TEST(WeftRunLaunch, EveryRankGetsItsEnvironment) {
  ProcessResult r = weftRun({"-n", "4", "-x", "WEFT_TEST_EXTRA=hello", PROBE_PATH, "env"});
  ASSERT_EQ(r.exitCode(), 0) << r.err;
  std::vector<std::string> lines = splitLines(r.out);
  ASSERT_EQ(lines.size(), 4u) << r.out;
  std::regex re(
      R"(\[(\d)\] rank=(\d) size=4 local=(\d)/4 id=127\.0\.0\.1:(\d+) secret=([0-9a-f]{32}) extra=hello)");
  std::set<int> ranks;
  std::set<std::string> ids, secrets;
  for (const std::string& line : lines) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, re)) << line;
    EXPECT_EQ(m[1], m[2]);
    EXPECT_EQ(m[2], m[3]);
    int port = std::stoi(m[4]);
    EXPECT_TRUE(port > 0 && port < 65536);
    ranks.insert(std::stoi(m[2]));
    ids.insert(m[4]);
    secrets.insert(m[5]);
  }
  EXPECT_EQ(ranks, (std::set<int>{0, 1, 2, 3}));
  EXPECT_EQ(ids.size(), 1u) << "all ranks share one rendezvous";
  EXPECT_EQ(secrets.size(), 1u) << "all ranks share one secret";
}

// The CPUs each rank of `args` may run on, by rank.
std::vector<std::set<int>> rankCpus(std::vector<std::string> args) {
  args.insert(args.end(), {PROBE_PATH, "cpus"});
  ProcessResult r = weftRun(args);
  EXPECT_EQ(r.exitCode(), 0) << r.err;
  std::vector<std::set<int>> out;
  std::regex re(R"(\[(\d+)\] cpus=([\d,]+))");
  for (const std::string& line : splitLines(r.out)) {
    std::smatch m;
    if (!std::regex_match(line, m, re)) {
      ADD_FAILURE() << line;
      continue;
    }
    const size_t rank = std::stoul(m[1]);
    if (out.size() <= rank) out.resize(rank + 1);
    std::stringstream list(m[2]);
    for (std::string cpu; std::getline(list, cpu, ',');)
      out[rank].insert(std::stoi(cpu));
  }
  return out;
}

// Where the ranks are no more than the cores, each gets a share of its own; more ranks, or
// --bind-to none, are left free; --bind-to cores binds more ranks too, a core each in turn.
TEST(WeftRunLaunch, RanksAreBoundToSharesOfTheCores) {
  cpu_set_t allowed;
  ASSERT_EQ(::sched_getaffinity(0, sizeof allowed, &allowed), 0);
  const std::vector<run::Core> cores = run::coresOf(allowed);
  if (cores.size() < 2) GTEST_SKIP() << "needs 2 cores, this process may use " << cores.size();
  std::set<int> all;
  for (const run::Core& core : cores)
    all.insert(core.begin(), core.end());
  std::vector<std::set<int>> two = rankCpus({"-n", "2"});
  ASSERT_EQ(two.size(), 2u);
  std::set<int> both = two[0];
  for (int cpu : two[1]) {
    EXPECT_TRUE(both.insert(cpu).second) << "CPU " << cpu << " given to both ranks";
  }
  for (const std::set<int>& cpus : two) {
    EXPECT_FALSE(cpus.empty());
    EXPECT_TRUE(std::includes(all.begin(), all.end(), cpus.begin(), cpus.end()));
  }
  for (const std::set<int>& cpus : rankCpus({"-n", "2", "--bind-to", "none"}))
    EXPECT_EQ(cpus, all);
  const std::string more = std::to_string(cores.size() + 1);
  for (const std::set<int>& cpus : rankCpus({"-n", more}))
    EXPECT_EQ(cpus, all);
  const std::vector<std::set<int>> forced = rankCpus({"-n", more, "--bind-to", "cores"});
  ASSERT_EQ(forced.size(), cores.size() + 1);
  EXPECT_EQ(forced.front(), forced.back()) << "the extra rank takes the first core again";
  EXPECT_EQ(forced.front(), std::set<int>(cores.front().begin(), cores.front().end()));
}

TEST(WeftRunLaunch, SecretDiffersBetweenLaunches) {
  ProcessResult a = weftRun({"-n", "1", PROBE_PATH, "env"});
  ProcessResult b = weftRun({"-n", "1", PROBE_PATH, "env"});
  std::regex re(R"(secret=([0-9a-f]{32}))");
  std::smatch ma, mb;
  ASSERT_TRUE(std::regex_search(a.out, ma, re)) << a.out;
  ASSERT_TRUE(std::regex_search(b.out, mb, re)) << b.out;
  EXPECT_NE(ma[1], mb[1]);
}

TEST(WeftRunLaunch, CommIdOverride) {
  ProcessResult r = weftRun({"-n", "2", "--comm-id", "10.1.2.3:4567", PROBE_PATH, "env"});
  ASSERT_EQ(r.exitCode(), 0) << r.err;
  EXPECT_EQ(countOf(r.out, "id=10.1.2.3:4567 "), 2u) << r.out;
}

TEST(WeftRunLaunch, OutputIsPrefixedLineByLine) {
  ProcessResult r = weftRun({"-n", "2", PROBE_PATH, "lines", "3"});
  ASSERT_EQ(r.exitCode(), 0) << r.err;
  for (const std::string& line : splitLines(r.out)) {
    EXPECT_TRUE(std::regex_match(line, std::regex(R"(\[[01]\] (line \d|partial))"))) << line;
  }
  for (const std::string& line : splitLines(r.err)) {
    EXPECT_TRUE(std::regex_match(line, std::regex(R"(\[[01]\] err \d)"))) << line;
  }
  for (int rank : {0, 1}) {
    std::string p = "[" + std::to_string(rank) + "] ";
    // Each rank's lines keep their order; the partial last line comes out, newline-ended.
    size_t l0 = r.out.find(p + "line 0\n"), l2 = r.out.find(p + "line 2\n");
    EXPECT_TRUE(l0 != std::string::npos && l2 != std::string::npos && l0 < l2) << r.out;
    EXPECT_NE(r.out.find(p + "partial\n"), std::string::npos) << r.out;
    EXPECT_NE(r.err.find(p + "err 2\n"), std::string::npos) << r.err;
  }
}

TEST(WeftRunLaunch, NoPrefix) {
  ProcessResult r = weftRun({"-n", "2", "--no-prefix", PROBE_PATH, "lines", "1"});
  ASSERT_EQ(r.exitCode(), 0) << r.err;
  EXPECT_EQ(countOf(r.out, "line 0\n"), 2u);
  EXPECT_EQ(r.out.find('['), std::string::npos) << r.out;
}

TEST(WeftRunLaunch, ProgramOptionsPassThrough) {
  // -n after the program name is the program's, not weft-run's.
  ProcessResult r = weftRun({"-n", "2", "--", "/bin/sh", "-c", "echo args: $0 $1", "-n", "5"});
  ASSERT_EQ(r.exitCode(), 0) << r.err;
  EXPECT_EQ(countOf(r.out, "] args: -n 5\n"), 2u) << r.out;
}

TEST(WeftRunLaunch, RanksThatFinishEarlyDoNotStopTheOthers) {
  ProcessResult r = weftRun({"-n", "3", PROBE_PATH, "stagger"});
  EXPECT_EQ(r.exitCode(), 0) << r.err;
  EXPECT_EQ(countOf(r.out, "] done\n"), 3u) << r.out;
}

TEST(WeftRunLaunch, FailingRankStopsTheOthers) {
  ProcessResult r = weftRun({"-n", "3", PROBE_PATH, "exit", "1", "3"});
  EXPECT_EQ(r.exitCode(), 3) << r.err;
  EXPECT_NE(r.err.find("weft-run: rank 1 exited with code 3"), std::string::npos) << r.err;
  EXPECT_LT(r.seconds, 10) << "siblings sleeping 60 s should have been stopped";
}

TEST(WeftRunLaunch, RankKilledBySignal) {
  ProcessResult r = weftRun({"-n", "3", PROBE_PATH, "kill", "2", "9"});
  EXPECT_EQ(r.exitCode(), 128 + 9) << r.err;
  EXPECT_NE(r.err.find("weft-run: rank 2 killed by signal 9"), std::string::npos) << r.err;
  EXPECT_LT(r.seconds, 10);
}

TEST(WeftRunLaunch, SigtermIsForwardedToRanks) {
  ProcessResult r =
      weftRun({"-n", "2", PROBE_PATH, "wait-term"}, [](pid_t pid, const std::string& out) {
        if (countOf(out, "ready\n") < 2) return false;
        ::kill(pid, SIGTERM);
        return true;
      });
  EXPECT_EQ(r.exitCode(), 128 + SIGTERM) << r.err;
  EXPECT_NE(r.out.find("[0] got SIGTERM"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[1] got SIGTERM"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("received SIGTERM"), std::string::npos) << r.err;
  EXPECT_LT(r.seconds, 10);
}

TEST(WeftRunLaunch, TimeoutStopsEverything) {
  ProcessResult r = weftRun({"-n", "2", "--timeout", "1", PROBE_PATH, "sleep", "60"});
  EXPECT_EQ(r.exitCode(), 124) << r.err;
  EXPECT_NE(r.err.find("timed out after 1 s"), std::string::npos) << r.err;
  EXPECT_GE(r.seconds, 0.9);
  EXPECT_LT(r.seconds, 10);
}

TEST(WeftRunLaunch, RanksIgnoringSigtermGetSigkillAfterGrace) {
  ProcessResult r = weftRun({"-n", "3", "--grace-seconds", "0.5", PROBE_PATH, "ignore-term", "0"});
  EXPECT_EQ(r.exitCode(), 1) << r.err;
  EXPECT_NE(r.err.find("rank 0 exited with code 1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("sending SIGKILL"), std::string::npos) << r.err;
  EXPECT_LT(r.seconds, 10);
}

TEST(WeftRunLaunch, MissingProgram) {
  ProcessResult r = weftRun({"-n", "2", "/nonexistent/program"});
  EXPECT_EQ(r.exitCode(), 127);
  EXPECT_NE(r.err.find("cannot run '/nonexistent/program'"), std::string::npos) << r.err;
}

TEST(WeftRunLaunch, UsageErrors) {
  EXPECT_EQ(weftRun({PROBE_PATH, "env"}).exitCode(), 2);  // no -n
  EXPECT_EQ(weftRun({"-n", "0", PROBE_PATH, "env"}).exitCode(), 2);
  EXPECT_EQ(weftRun({"-n", "2"}).exitCode(), 2);  // no program
  EXPECT_EQ(weftRun({"-n", "2", "--comm-id", "nohost", PROBE_PATH}).exitCode(), 2);
  ProcessResult help = weftRun({"--help"});
  EXPECT_EQ(help.exitCode(), 0);
  EXPECT_NE(help.out.find("--grace-seconds"), std::string::npos);
}

}  // namespace
}  // namespace weft::test
