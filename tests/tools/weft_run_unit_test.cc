// weft-run's pieces without starting processes: options, line prefixing, the environment.
#include <signal.h>
#include <unistd.h>

#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tools/weft_run/binding.h"
#include "tools/weft_run/hosts.h"
#include "tools/weft_run/options.h"
#include "tools/weft_run/output.h"
#include "tools/weft_run/spawn.h"

namespace weft::run {
namespace {

ParseResult parse(std::vector<const char*> args) {
  args.insert(args.begin(), "weft-run");
  return parseOptions(static_cast<int>(args.size()), args.data());
}

// Four cores of two threads each, as sysfs numbers them on many x86 machines.
const std::vector<Core> kCores = {{0, 4}, {1, 5}, {2, 6}, {3, 7}};

TEST(WeftRunBinding, SharesOfTheCores) {
  EXPECT_EQ(rankCpus(kCores, 0, 1, Bind::kAuto), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(rankCpus(kCores, 0, 2, Bind::kAuto), (std::vector<int>{0, 1, 4, 5}));
  EXPECT_EQ(rankCpus(kCores, 1, 2, Bind::kAuto), (std::vector<int>{2, 3, 6, 7}));
  // Three ranks on four cores: shares of one or two cores, disjoint, covering all four.
  std::vector<int> all;
  for (int r = 0; r < 3; ++r) {
    std::vector<int> cpus = rankCpus(kCores, r, 3, Bind::kCores);
    EXPECT_TRUE(cpus.size() == 2 || cpus.size() == 4) << r;
    all.insert(all.end(), cpus.begin(), cpus.end());
  }
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(WeftRunBinding, MoreRanksThanCores) {
  EXPECT_TRUE(rankCpus(kCores, 0, 5, Bind::kAuto).empty()) << "auto leaves them free";
  EXPECT_EQ(rankCpus(kCores, 4, 5, Bind::kCores), (std::vector<int>{0, 4}))
      << "a core each in turn";
  EXPECT_EQ(rankCpus(kCores, 3, 5, Bind::kCores), (std::vector<int>{3, 7}));
  EXPECT_TRUE(rankCpus(kCores, 0, 2, Bind::kNone).empty());
  EXPECT_TRUE(rankCpus({}, 0, 1, Bind::kCores).empty());
}

TEST(WeftRunBinding, CoresOfThisMachineCoverItsCpusOnce) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  std::vector<int> seen;
  for (const Core& core : coresOf(allowed)) {
    EXPECT_FALSE(core.empty());
    seen.insert(seen.end(), core.begin(), core.end());
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen.size(), static_cast<size_t>(CPU_COUNT(&allowed)));
  EXPECT_EQ(std::unique(seen.begin(), seen.end()), seen.end());
}

TEST(WeftRunOptions, BindTo) {
  EXPECT_EQ(parse({"-n", "2", "prog"}).options->bind, Bind::kAuto);
  EXPECT_EQ(parse({"-n", "2", "--bind-to", "none", "prog"}).options->bind, Bind::kNone);
  EXPECT_EQ(parse({"-n", "2", "--bind-to", "cores", "prog"}).options->bind, Bind::kCores);
  ParseResult bad = parse({"-n", "2", "--bind-to", "socket", "prog"});
  EXPECT_FALSE(bad.options);
  EXPECT_NE(bad.message.find("--bind-to"), std::string::npos) << bad.message;
}

TEST(WeftRunOptions, Defaults) {
  ParseResult r = parse({"-n", "4", "prog"});
  ASSERT_TRUE(r.options) << r.message;
  EXPECT_EQ(r.options->nranks, 4);
  EXPECT_EQ(r.options->command, std::vector<std::string>{"prog"});
  EXPECT_TRUE(r.options->prefix);
  EXPECT_EQ(r.options->graceSeconds, 5);
  EXPECT_EQ(r.options->timeoutSeconds, 0);
  EXPECT_TRUE(r.options->commId.empty());
  EXPECT_TRUE(r.options->env.empty());
}

TEST(WeftRunOptions, ProgramArgumentsAreNotOurs) {
  ParseResult r = parse({"-n", "2", "prog", "-n", "5", "--timeout", "x", "-x"});
  ASSERT_TRUE(r.options) << r.message;
  EXPECT_EQ(r.options->nranks, 2);
  EXPECT_EQ(r.options->command,
            (std::vector<std::string>{"prog", "-n", "5", "--timeout", "x", "-x"}));
  EXPECT_EQ(r.options->timeoutSeconds, 0);
}

TEST(WeftRunOptions, DoubleDashEndsOptions) {
  ParseResult r = parse({"--np", "2", "--", "prog", "--help"});
  ASSERT_TRUE(r.options) << r.message;
  EXPECT_EQ(r.options->command, (std::vector<std::string>{"prog", "--help"}));
  r = parse({"-n", "2", "--", "-dash-prog"});
  ASSERT_TRUE(r.options) << r.message;
  EXPECT_EQ(r.options->command, std::vector<std::string>{"-dash-prog"});
}

TEST(WeftRunOptions, AllOptions) {
  ParseResult r = parse({"-n", "3", "--comm-id", "node1:29500", "-x", "A=1", "--env", "B=x=y",
                         "--no-prefix", "--grace-seconds", "0.5", "--timeout", "30", "prog"});
  ASSERT_TRUE(r.options) << r.message;
  EXPECT_EQ(r.options->commId, "node1:29500");
  EXPECT_EQ(r.options->env,
            (std::vector<std::pair<std::string, std::string>>{{"A", "1"}, {"B", "x=y"}}));
  EXPECT_FALSE(r.options->prefix);
  EXPECT_EQ(r.options->graceSeconds, 0.5);
  EXPECT_EQ(r.options->timeoutSeconds, 30);
  EXPECT_EQ(r.options->command, std::vector<std::string>{"prog"});
}

TEST(WeftRunOptions, Errors) {
  for (std::vector<const char*> args : std::vector<std::vector<const char*>>{
           {"prog"},                                  // no -n
           {"-n", "0", "prog"},                       // no ranks
           {"-n", "two", "prog"},                     // not a number
           {"-n", "2"},                               // no program
           {"-n", "2", "--comm-id", "host", "prog"},  // no port
           {"-n", "2", "--comm-id", "host:0", "prog"},
           {"-n", "2", "--comm-id", "host:65536", "prog"},
           {"-n", "2", "-x", "1X=1", "prog"},  // bad variable name
           {"-n", "2", "--timeout", "-1", "prog"},
           {"-n", "2", "--bogus", "prog"},  // not taken for the program
           {"--hosts", "a:2,b:0", "prog"},  // no slots
           {"--hosts", "a:x", "prog"},      // not a number
           {"--hosts", "a;rm:1", "prog"},   // not a host name
           {"--hosts", "a:2", "--hostfile", "/dev/null", "prog"},
           {"--hostfile", "/no/such/file", "prog"},
           {"-n", "5", "--hosts", "a:2,b:2", "prog"},  // more ranks than slots
       }) {
    ParseResult r = parse(args);
    EXPECT_FALSE(r.options) << args.size();
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.message.find("weft-run: "), std::string::npos) << r.message;
  }
}

TEST(WeftRunOptions, HelpAndVersion) {
  ParseResult help = parse({"--help"});
  EXPECT_FALSE(help.options);
  EXPECT_EQ(help.exitCode, 0);
  EXPECT_NE(help.message.find("--comm-id"), std::string::npos);
  ParseResult version = parse({"--version"});
  EXPECT_EQ(version.exitCode, 0);
  EXPECT_NE(version.message.find("weft-run"), std::string::npos);
}

TEST(WeftRunOptions, EnvSpec) {
  std::string error;
  auto kv = parseEnvSpec("NAME=a=b", &error);
  ASSERT_TRUE(kv);
  EXPECT_EQ(kv->first, "NAME");
  EXPECT_EQ(kv->second, "a=b");
  EXPECT_EQ(parseEnvSpec("EMPTY=", &error)->second, "");
  ::setenv("WEFT_RUN_TEST_VAR", "inherited", 1);
  EXPECT_EQ(parseEnvSpec("WEFT_RUN_TEST_VAR", &error)->second, "inherited");
  ::unsetenv("WEFT_RUN_TEST_VAR");
  EXPECT_FALSE(parseEnvSpec("WEFT_RUN_TEST_VAR", &error));
  EXPECT_FALSE(parseEnvSpec("=x", &error));
  EXPECT_FALSE(parseEnvSpec("A-B=x", &error));
}

TEST(WeftRunOptions, CommId) {
  EXPECT_TRUE(validCommId("127.0.0.1:1"));
  EXPECT_TRUE(validCommId("host.example:65535"));
  EXPECT_TRUE(validCommId("[::1]:29500"));
  EXPECT_FALSE(validCommId(":29500"));
  EXPECT_FALSE(validCommId("host:"));
  EXPECT_FALSE(validCommId("host:12a"));
  EXPECT_FALSE(validCommId("host:123456"));
}

// Collects what a LinePrefixer passes on, one entry per sink call.
struct Collected {
  std::vector<std::string> pieces;
  LinePrefixer::Sink sink() {
    return [this](std::string_view s) {
      pieces.emplace_back(s);
      return true;
    };
  }
};

TEST(LinePrefixer, WholeLinesWithPrefix) {
  Collected c;
  LinePrefixer p("[3] ", c.sink());
  p.feed("one\ntw");
  p.feed("o\n\nthr");
  EXPECT_EQ(c.pieces, (std::vector<std::string>{"[3] one\n", "[3] two\n", "[3] \n"}));
  p.finish();
  EXPECT_EQ(c.pieces.back(), "[3] thr\n");
  p.finish();  // nothing left
  EXPECT_EQ(c.pieces.size(), 4u);
}

TEST(LinePrefixer, NoPrefix) {
  Collected c;
  LinePrefixer p(rankPrefix(0, false), c.sink());
  p.feed("a\nb\n");
  EXPECT_EQ(c.pieces, (std::vector<std::string>{"a\n", "b\n"}));
  EXPECT_EQ(rankPrefix(12, true), "[12] ");
}

TEST(LinePrefixer, LongLineIsSplit) {
  Collected c;
  LinePrefixer p("[0] ", c.sink());
  p.feed(std::string(LinePrefixer::kMaxLine + 10, 'x'));
  ASSERT_EQ(c.pieces.size(), 1u);
  EXPECT_EQ(c.pieces[0].size(), 4 + LinePrefixer::kMaxLine + 10 + 1);
  p.feed("end\n");
  EXPECT_EQ(c.pieces.back(), "[0] end\n");
}

TEST(LinePrefixer, ReportsAClosedSink) {
  int calls = 0;
  LinePrefixer p("", [&](std::string_view) { return ++calls < 2; });
  EXPECT_TRUE(p.feed("a\n"));
  EXPECT_FALSE(p.feed("b\nc\n"));
  EXPECT_TRUE(p.feed("partial"));
  EXPECT_FALSE(p.finish());
}

TEST(LinePrefixer, FdSinkFailsOnAClosedPipe) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  LinePrefixer::Sink sink = fdSink(fds[1]);
  EXPECT_TRUE(sink("x\n"));
  ::close(fds[0]);
  ::signal(SIGPIPE, SIG_IGN);
  EXPECT_FALSE(sink("y\n"));
  ::close(fds[1]);
}

TEST(RankEnvironment, SetsLaunchVariablesAndKeepsTheRest) {
  const char* inherited[] = {"PATH=/bin", "WEFT_RANK=99", "KEEP=1", "OVERRIDE=old", nullptr};
  LaunchEnv env{4, "127.0.0.1:1234", std::string(32, 'a'), {{"OVERRIDE", "new"}, {"NEW", "x"}}};
  std::vector<std::string> e = rankEnvironment(env, 2, 1, 3, const_cast<char**>(inherited));
  auto has = [&](const std::string& kv) { return std::find(e.begin(), e.end(), kv) != e.end(); };
  EXPECT_TRUE(has("PATH=/bin"));
  EXPECT_TRUE(has("KEEP=1"));
  EXPECT_TRUE(has("WEFT_RANK=2"));
  EXPECT_FALSE(has("WEFT_RANK=99"));
  EXPECT_TRUE(has("WEFT_WORLD_SIZE=4"));
  EXPECT_TRUE(has("WEFT_LOCAL_RANK=1"));
  EXPECT_TRUE(has("WEFT_LOCAL_SIZE=3"));
  EXPECT_TRUE(has("WEFT_COMM_ID=127.0.0.1:1234"));
  EXPECT_TRUE(has("WEFT_COMM_SECRET=" + std::string(32, 'a')));
  EXPECT_TRUE(has("OVERRIDE=new"));
  EXPECT_FALSE(has("OVERRIDE=old"));
  EXPECT_TRUE(has("NEW=x"));
}

TEST(RankEnvironment, RemoteRanksGetThisEnvironmentsWeftVariablesThenTheirOwn) {
  const char* inherited[] = {"PATH=/bin", "WEFT_DEBUG=INFO", "WEFT_RANK=99", nullptr};
  LaunchEnv env{4, "h:1234", std::string(32, 'a'), {{"OMP_NUM_THREADS", "2"}}};
  auto vars = remoteVariables(env, 3, 1, 2, const_cast<char**>(inherited));
  auto at = [&](const std::string& name, const std::string& value) {
    return std::find(vars.begin(), vars.end(), std::make_pair(name, value)) - vars.begin();
  };
  const long n = static_cast<long>(vars.size());
  EXPECT_LT(at("WEFT_DEBUG", "INFO"), n);
  EXPECT_LT(at("OMP_NUM_THREADS", "2"), n);
  EXPECT_LT(at("WEFT_LOCAL_RANK", "1"), n);
  EXPECT_LT(at("WEFT_LOCAL_SIZE", "2"), n);
  EXPECT_EQ(at("PATH", "/bin"), n) << "only WEFT_* variables are forwarded";
  // Both WEFT_RANK values are there; the launcher's comes later, and env(1) takes the last.
  EXPECT_LT(at("WEFT_RANK", "99"), at("WEFT_RANK", "3"));
  EXPECT_LT(at("WEFT_RANK", "3"), n);
}

TEST(Hosts, ListsAndFiles) {
  std::string error;
  auto list = parseHostList("a:2,b,c:3,a", &error);
  ASSERT_TRUE(list) << error;
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ((*list)[0].name, "a");
  EXPECT_EQ((*list)[0].slots, 3);  // named twice: 2 + 1
  EXPECT_EQ((*list)[1].slots, 1);
  EXPECT_EQ((*list)[2].slots, 3);
  auto file = parseHostfile(
      "# a comment\nnode1 slots=4\n\n  node2 slots=2 max_slots=8 # trailing\nnode3\n", &error);
  ASSERT_TRUE(file) << error;
  ASSERT_EQ(file->size(), 3u);
  EXPECT_EQ((*file)[0].name, "node1");
  EXPECT_EQ((*file)[0].slots, 4);
  EXPECT_EQ((*file)[1].slots, 2);
  EXPECT_EQ((*file)[2].slots, 1);
  EXPECT_FALSE(parseHostfile("node1 slots=0\n", &error));
  EXPECT_NE(error.find("line 1"), std::string::npos) << error;
  EXPECT_FALSE(parseHostfile("node1 slots=2\nnode2 cpus=3\n", &error));
  EXPECT_NE(error.find("line 2"), std::string::npos) << error;
  EXPECT_FALSE(parseHostfile("# nothing\n", &error));
}

TEST(Hosts, RanksFillTheSlotsInOrder) {
  const std::vector<HostSlots> hosts = {{"a", 2}, {"b", 3}, {"c", 1}};
  const std::vector<RankPlace> all = placeRanks(hosts, 6);
  ASSERT_EQ(all.size(), 6u);
  const int host[] = {0, 0, 1, 1, 1, 2};
  const int local[] = {0, 1, 0, 1, 2, 0};
  const int size[] = {2, 2, 3, 3, 3, 1};
  for (size_t r = 0; r < 6; ++r) {
    EXPECT_EQ(all[r].host, host[r]) << r;
    EXPECT_EQ(all[r].localRank, local[r]) << r;
    EXPECT_EQ(all[r].localSize, size[r]) << r;
  }
  const std::vector<RankPlace> some = placeRanks(hosts, 3);  // b gets one rank of its three
  ASSERT_EQ(some.size(), 3u);
  EXPECT_EQ(some[2].host, 1);
  EXPECT_EQ(some[2].localSize, 1);
}

TEST(Hosts, OptionsTakeTheSlotsAsTheDefaultCount) {
  ParseResult r = parse({"--hosts", "a:2,b:3", "--rsh", "my-rsh -q", "prog"});
  ASSERT_TRUE(r.options) << r.message;
  EXPECT_EQ(r.options->nranks, 5);
  EXPECT_EQ(r.options->rsh, "my-rsh -q");
  ASSERT_EQ(r.options->hosts.size(), 2u);
  r = parse({"-n", "3", "--hosts", "a:2,b:3", "prog"});
  ASSERT_TRUE(r.options) << r.message;
  EXPECT_EQ(r.options->nranks, 3);
  EXPECT_EQ(parse({"--hosts", "a", "prog"}).options->rsh, "ssh");
}

// Runs a remote command line here with sh, its input a pipe held open until closeAfter; its
// exit status and output.
std::pair<int, std::string> runRemoteLine(const std::string& line, double closeAfter) {
  std::string error;
  Child c = spawnChild({"sh", "-c", line}, {"PATH=/usr/bin:/bin"}, true, &error);
  EXPECT_GT(c.pid, 0) << error;
  std::this_thread::sleep_for(std::chrono::duration<double>(closeAfter));
  ::close(c.inFd);
  int status = 0;
  ::waitpid(c.pid, &status, 0);
  std::string out;
  char buf[256];
  ssize_t n;
  while ((n = ::read(c.outFd, buf, sizeof buf)) > 0)
    out.append(buf, static_cast<size_t>(n));
  ::close(c.outFd);
  ::close(c.errFd);
  return {status, out};
}

// The remote command line, run here by sh: the variables reach the program, quoting survives,
// the exit code comes back, and closing the input stops the program.
TEST(Hosts, RemoteCommandLineRunsAndStops) {
  const std::string line =
      remoteCommandLine({{"WEFT_RANK", "3"}, {"ODD", "a 'b' $c"}},
                        {"sh", "-c", "echo \"$WEFT_RANK|$ODD|$1\"; exit 7", "sh", "x y"}, "/");
  auto [status, out] = runRemoteLine(line, 1.0);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 7);
  EXPECT_EQ(out, "3|a 'b' $c|x y\n");
  // A program that would sleep for a minute stops once its input closes.
  const auto start = std::chrono::steady_clock::now();
  auto [slept, none] = runRemoteLine(remoteCommandLine({}, {"sleep", "60"}, "/"), 0.2);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_TRUE(WIFEXITED(slept));
  EXPECT_EQ(WEXITSTATUS(slept), 128 + SIGTERM);
}

TEST(RankEnvironment, SecretAndPort) {
  std::string error;
  std::string a = randomSecret(&error), b = randomSecret(&error);
  EXPECT_EQ(a.size(), 32u) << a;
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos) << a;
  EXPECT_NE(a, b);
  std::string id = pickLocalCommId(&error);
  ASSERT_EQ(id.rfind("127.0.0.1:", 0), 0u) << id << error;
  EXPECT_EQ(id.find_first_not_of("0123456789", 10), std::string::npos) << id;
  EXPECT_TRUE(validCommId(id));
}

}  // namespace
}  // namespace weft::run
