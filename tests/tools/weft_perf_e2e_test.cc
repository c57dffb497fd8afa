// weft-perf against the real library, alone and under weft-run: exit codes, the table, the
// JSON file, validation, threads as ranks, timeouts and the COLL log.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/tools/process.h"

namespace weft::test {
namespace {

constexpr double kDeadline = 120;

ProcessResult perf(int nranks, std::vector<std::string> args,
                   const std::string& program = WEFT_PERF_PATH) {
  std::vector<std::string> argv = {WEFT_RUN_PATH, "-n",  std::to_string(nranks),
                                   "--timeout",   "100", program};
  argv.insert(argv.end(), args.begin(), args.end());
  return runProcess(argv, kDeadline);
}

// weft-perf alone, without a launcher.
ProcessResult perfAlone(std::vector<std::string> args) {
  args.insert(args.begin(), WEFT_PERF_PATH);
  return runProcess(args, kDeadline);
}

// The table rows rank 0 printed, split into columns: lines that start with `prefix` (weft-run's
// "[0] "), without it.
std::vector<std::vector<std::string>> rows(const std::string& out,
                                           const std::string& prefix = "[0] ") {
  std::vector<std::vector<std::string>> table;
  for (const std::string& line : splitLines(out)) {
    if (line.rfind(prefix, 0) != 0 || line.rfind(prefix + "#", 0) == 0) continue;
    std::vector<std::string> cols;
    std::istringstream in(line.substr(prefix.size()));
    for (std::string c; in >> c;) {
      cols.push_back(c);
    }
    table.push_back(cols);
  }
  return table;
}

bool contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

TEST(WeftPerfEndToEnd, AllReduceTable) {
  ProcessResult r = perf(2, {"all_reduce", "-b", "8", "-e", "1M", "-f", "4", "-c", "1"});
  ASSERT_EQ(r.exitCode(), 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out,
                       "[0] # nThread 1 nGpus 1 minBytes 8 maxBytes 1048576 step: 4(factor) "
                       "warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"))
      << r.out;
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex(R"(\[0\] #  Rank  0 Group  0 Pid +\d+ on +\S+ device  cpu\n)")));
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex(R"(\[0\] #  Rank  1 Group  0 Pid +\d+ on +\S+ device  cpu\n)")));
  EXPECT_TRUE(contains(r.out, "#       size         count      type   redop    root     time"));
  EXPECT_FALSE(contains(r.out, "[1] ")) << "only rank 0 prints";

  auto table = rows(r.out);
  std::vector<size_t> sizes = {8, 32, 128, 512, 2048, 8192, 32768, 131072, 524288};
  ASSERT_EQ(table.size(), sizes.size()) << r.out;
  std::regex number(R"(\d+(\.\d+)?)");
  for (size_t i = 0; i < table.size(); ++i) {
    const auto& c = table[i];
    ASSERT_EQ(c.size(), 13u) << r.out;
    EXPECT_EQ(c[0], std::to_string(sizes[i]));
    EXPECT_EQ(c[1], std::to_string(sizes[i] / 4));
    EXPECT_EQ(c[2], "float");
    EXPECT_EQ(c[3], "sum");
    EXPECT_EQ(c[4], "-1");
    for (int col : {5, 6, 7, 9, 10, 11}) {
      EXPECT_TRUE(std::regex_match(c[col], number)) << c[col];
    }
    EXPECT_EQ(c[8], "0");
    EXPECT_EQ(c[12], "0");
    // With two ranks busbw equals algbw.
    EXPECT_EQ(c[6], c[7]);
  }
  EXPECT_TRUE(contains(r.out, "[0] # Out of bounds values : 0 OK\n"));
  EXPECT_TRUE(
      std::regex_search(r.out, std::regex(R"(\[0\] # Avg bus bandwidth    : [0-9.e+-]+ \n)")));
}

TEST(WeftPerfEndToEnd, EveryCollectiveValidates) {
  for (const char* coll : {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce",
                           "all_to_all", "sendrecv", "send"}) {
    ProcessResult r = perf(3, {coll, "-b", "1K", "-e", "64K", "-f", "8", "-n", "3", "-w", "1"});
    EXPECT_EQ(r.exitCode(), 0) << coll << "\n" << r.out << r.err;
    EXPECT_TRUE(contains(r.out, "# Out of bounds values : 0 OK")) << coll;
    auto table = rows(r.out);
    ASSERT_EQ(table.size(), 3u) << coll << "\n" << r.out;  // 1K, 8K, 64K
    for (const auto& c : table) {
      ASSERT_EQ(c.size(), 13u) << coll;
      EXPECT_EQ(c[8], "0") << coll;
      std::string name = coll;
      bool inPlaceChecked = name != "sendrecv" && name != "send";
      EXPECT_EQ(c[12], inPlaceChecked ? "0" : "N/A") << coll;
    }
  }
}

// weftAllToAll runs in place from a copy of the input: measured and checked, from the direct
// slots up to sizes that go staged, also grouped (-m) and blocking.
TEST(WeftPerfEndToEnd, InPlaceAllToAllIsMeasured) {
  for (const char* blocking : {"0", "1"}) {
    ProcessResult r = perf(3, {"all_to_all", "-b", "3K", "-e", "3M", "-f", "32", "-n", "2", "-w",
                               "1", "-m", "2", "-z", blocking});
    ASSERT_EQ(r.exitCode(), 0) << r.out << r.err;
    auto table = rows(r.out);
    ASSERT_EQ(table.size(), 3u) << r.out;  // 3K, 96K, 3M
    std::regex number(R"(\d+(\.\d+)?)");
    for (const auto& c : table) {
      for (int col : {9, 10, 11}) {
        EXPECT_TRUE(std::regex_match(c[col], number)) << c[col];
      }
      EXPECT_EQ(c[12], "0");
    }
  }
}

// -R 1: every buffer from weftMemAlloc, so the larger sizes go mapped; results still check.
TEST(WeftPerfEndToEnd, BuffersFromWeftMemAllocValidate) {
  for (const char* coll :
       {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "all_to_all"}) {
    ProcessResult r =
        perf(3, {coll, "-b", "1K", "-e", "1M", "-f", "32", "-n", "3", "-w", "1", "-R", "1"});
    EXPECT_EQ(r.exitCode(), 0) << coll << "\n" << r.out << r.err;
    EXPECT_TRUE(contains(r.out, "# Buffers from weftMemAlloc")) << coll;
    EXPECT_TRUE(contains(r.out, "# Out of bounds values : 0 OK")) << coll << "\n" << r.out;
    EXPECT_EQ(rows(r.out).size(), 3u) << coll << "\n" << r.out;  // 1K, 32K, 1M
  }
}

TEST(WeftPerfEndToEnd, AllTypesAndOperations) {
  ProcessResult r = perf(
      3, {"all_reduce", "-d", "all", "-o", "all", "-b", "96", "-e", "96", "-n", "1", "-w", "0"});
  ASSERT_EQ(r.exitCode(), 0) << r.out << r.err;
  auto table = rows(r.out);
  EXPECT_EQ(table.size(), 50u);
  for (const auto& c : table) {
    EXPECT_EQ(c[8], "0") << c[2] << " " << c[3];
    EXPECT_EQ(c[12], "0") << c[2] << " " << c[3];
  }
}

TEST(WeftPerfEndToEnd, EveryRootAndBlockingAndGroupedCalls) {
  ProcessResult roots = perf(3, {"broadcast", "-r", "-1", "-b", "1K", "-e", "1K", "-z", "1"});
  ASSERT_EQ(roots.exitCode(), 0) << roots.out << roots.err;
  auto table = rows(roots.out);
  ASSERT_EQ(table.size(), 3u);
  for (int root = 0; root < 3; ++root) {
    EXPECT_EQ(table[root][4], std::to_string(root));
  }
  EXPECT_TRUE(contains(roots.out, "# Blocking Enabled"));

  ProcessResult grouped = perf(2, {"sendrecv", "-b", "4K", "-e", "4K", "-m", "4", "-z", "0"});
  EXPECT_EQ(grouped.exitCode(), 0) << grouped.out << grouped.err;
  EXPECT_TRUE(contains(grouped.out, "agg iters: 4"));
}

TEST(WeftPerfEndToEnd, NcclTestsProgramName) {
  // Installed as a link named after the nccl-tests binary, it needs no collective argument.
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("weft_perf_e2e_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::path link = dir / "all_gather_perf";
  std::filesystem::create_symlink(WEFT_PERF_PATH, link);
  ProcessResult r = perf(2, {"-b", "1K", "-e", "1K"}, link.string());
  std::filesystem::remove_all(dir);
  ASSERT_EQ(r.exitCode(), 0) << r.out << r.err;
  auto table = rows(r.out);
  ASSERT_EQ(table.size(), 1u);
  EXPECT_EQ(table[0][3], "none");  // all_gather has no reduction
  EXPECT_EQ(table[0][1], "128");   // 1K of float over 2 ranks: 128 per rank
}

TEST(WeftPerfEndToEnd, UsageErrors) {
  ProcessResult bad = runProcess({WEFT_PERF_PATH, "all_reduce", "-d", "float8"}, kDeadline);
  EXPECT_EQ(bad.exitCode(), 2);
  EXPECT_TRUE(contains(bad.err, "unknown data type")) << bad.err;
  ProcessResult root = perf(2, {"broadcast", "-r", "5", "-b", "8", "-e", "8"});
  EXPECT_NE(root.exitCode(), 0);
  EXPECT_TRUE(contains(root.err, "root 5 is not a rank")) << root.err;
}

// The pid of each rank line ("#  Rank  r Group  0 Pid    p on ..."), by rank.
std::map<int, int> rankPids(const std::string& out) {
  std::map<int, int> pids;
  std::regex line(R"(#  Rank +(\d+) Group +\d+ Pid +(\d+) on)");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), line); it != std::sregex_iterator();
       ++it) {
    pids[std::stoi((*it)[1])] = std::stoi((*it)[2]);
  }
  return pids;
}

// Sets an environment variable for one scope: runProcess's children inherit it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(name_); }

 private:
  const char* name_;
};

// Without a launcher's variables weft-perf is a world of one rank.
TEST(WeftPerfEndToEnd, RunsAloneWithoutALauncher) {
  for (const char* var : {"WEFT_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "RANK"})
    ::unsetenv(var);
  ProcessResult r = perfAlone({"all_reduce", "-b", "1K", "-e", "4K", "-f", "2"});
  ASSERT_EQ(r.exitCode(), 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "# nThread 1 nGpus 1 minBytes 1024 maxBytes 4096")) << r.out;
  EXPECT_EQ(rankPids(r.out).size(), 1u) << r.out;
  auto table = rows(r.out, "");
  ASSERT_EQ(table.size(), 3u) << r.out;
  for (const auto& c : table) {
    ASSERT_EQ(c.size(), 13u);
    EXPECT_EQ(c[7], "0.00") << "one rank's all_reduce moves nothing between ranks";
    EXPECT_EQ(c[8], "0");
    EXPECT_EQ(c[12], "0");
  }
}

// -t: each process runs that many ranks as threads; ranks are numbered process by process.
TEST(WeftPerfEndToEnd, ThreadsAreRanks) {
  ProcessResult alone = perfAlone({"all_gather", "-t", "3", "-b", "3K", "-e", "3K"});
  ASSERT_EQ(alone.exitCode(), 0) << alone.out << alone.err;
  std::map<int, int> pids = rankPids(alone.out);
  ASSERT_EQ(pids.size(), 3u) << alone.out;
  EXPECT_EQ(pids[0], pids[2]);
  auto table = rows(alone.out, "");
  ASSERT_EQ(table.size(), 1u) << alone.out;
  EXPECT_EQ(table[0][1], "256");  // 3K of float over 3 ranks
  EXPECT_EQ(table[0][8], "0");

  for (const char* coll : {"all_reduce", "reduce_scatter", "broadcast"}) {
    ProcessResult r = perf(2, {coll, "-t", "2", "-b", "4K", "-e", "64K", "-f", "16", "-r", "-1"});
    ASSERT_EQ(r.exitCode(), 0) << coll << "\n" << r.out << r.err;
    EXPECT_TRUE(contains(r.out, "[0] # nThread 2 nGpus 1")) << r.out;
    pids = rankPids(r.out);
    ASSERT_EQ(pids.size(), 4u) << r.out;
    EXPECT_EQ(pids[0], pids[1]);
    EXPECT_EQ(pids[2], pids[3]);
    EXPECT_NE(pids[0], pids[2]);
    for (const auto& c : rows(r.out)) {
      EXPECT_EQ(c[8], "0") << coll;
      EXPECT_EQ(c[12], "0") << coll;
    }
  }
}

// -N repeats the sweep; -C reports the time until the calls returned.
TEST(WeftPerfEndToEnd, RunCyclesAndCpuTime) {
  ProcessResult r =
      perf(2, {"all_reduce", "-b", "1K", "-e", "4K", "-f", "4", "-N", "3", "-C", "1"});
  ASSERT_EQ(r.exitCode(), 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "    root  cputime   algbw   busbw  #wrong  cputime")) << r.out;
  auto table = rows(r.out);
  ASSERT_EQ(table.size(), 6u) << r.out;  // 1K and 4K, three times
  for (size_t i = 0; i < table.size(); ++i) {
    EXPECT_EQ(table[i][0], i % 2 == 0 ? "1024" : "4096");
  }
}

// -J: one record per row, with the table's numbers.
TEST(WeftPerfEndToEnd, JsonResults) {
  const std::string path = ::testing::TempDir() + "weft_perf_e2e_" + std::to_string(::getpid());
  ProcessResult r = perf(2, {"all_reduce", "-b", "1K", "-e", "4K", "-f", "2", "-J", path});
  ASSERT_EQ(r.exitCode(), 0) << r.out << r.err;
  std::ifstream in(path);
  nlohmann::json j = nlohmann::json::parse(in);
  std::remove(path.c_str());
  EXPECT_EQ(j["config"]["nranks"], 2);
  auto table = rows(r.out);
  ASSERT_EQ(j["results"].size(), table.size());
  for (size_t i = 0; i < table.size(); ++i) {
    const nlohmann::json& rec = j["results"][i];
    EXPECT_EQ(std::to_string(rec["size"].get<size_t>()), table[i][0]);
    EXPECT_EQ(std::to_string(rec["count"].get<size_t>()), table[i][1]);
    EXPECT_EQ(rec["type"], "float");
    EXPECT_EQ(rec["redop"], "sum");
    for (const char* place : {"out_of_place", "in_place"}) {
      EXPECT_EQ(rec[place]["nwrong"], 0);
      EXPECT_GT(rec[place]["time"].get<double>(), 0);
    }
    EXPECT_NEAR(rec["out_of_place"]["bus_bw"].get<double>(), std::stod(table[i][7]), 0.006);
  }
  EXPECT_EQ(j["out_of_bounds"]["okay"], true);

  ProcessResult bad = perf(2, {"all_reduce", "-b", "1K", "-e", "1K", "-J", "/nonexistent/r.json"});
  EXPECT_EQ(bad.exitCode(), 2) << bad.out << bad.err;
  EXPECT_TRUE(contains(bad.err, "cannot write '/nonexistent/r.json'")) << bad.err;
}

// --busy runs compute threads beside the calls and says what they got done; --percentiles adds
// each row's p50, p99 and max, which bound the mean between them.
TEST(WeftPerfEndToEnd, BusyThreadsAndPerCallTimes) {
  ProcessResult r = perf(2, {"all_reduce", "-b", "8", "-e", "64K", "-f", "16", "-z", "1", "-c", "1",
                             "--busy", "1", "--percentiles"});
  ASSERT_EQ(r.exitCode(), 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "# Busy: 1 compute thread per rank")) << r.out;
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex(R"(# Compute left to the busy threads: [\d.e+]+ G rounds/s in process 0)")))
      << r.out;
  auto table = rows(r.out);
  ASSERT_EQ(table.size(), 4u) << r.out;
  for (const auto& c : table) {
    ASSERT_EQ(c.size(), 16u) << r.out;
    const double mean = std::stod(c[5]), p50 = std::stod(c[13]), p99 = std::stod(c[14]),
                 max = std::stod(c[15]);
    EXPECT_LE(p50, p99) << r.out;
    EXPECT_LE(p99, max) << r.out;
    // The mean is of the same calls, each the average rank's (-a 1) where the percentiles take
    // the slowest rank's: it cannot pass the slowest call. (Both rounded to the column.)
    EXPECT_LE(mean, max * 1.01 + 0.01) << r.out;
    EXPECT_EQ(c[8], "0");
  }
}

// WEFT_TESTS_MIN_BW (or --min_bw): an average bus bandwidth below it fails the run.
TEST(WeftPerfEndToEnd, MinimumBusBandwidth) {
  std::vector<std::string> args = {"all_reduce", "-b", "1K", "-e", "1K", "-n", "2"};
  {
    ScopedEnv minimum("WEFT_TESTS_MIN_BW", "1e9");
    ProcessResult slow = perf(2, args);
    EXPECT_EQ(slow.exitCode(), 1) << slow.out << slow.err;
    EXPECT_TRUE(contains(slow.out, "# Avg bus bandwidth    : ")) << slow.out;
    EXPECT_TRUE(contains(slow.out, " FAILED\n")) << slow.out;
    EXPECT_TRUE(contains(slow.err, "is below the minimum 1e+09")) << slow.err;
    args.insert(args.end(), {"--min_bw", "0"});  // the flag wins
    ProcessResult fine = perf(2, args);
    EXPECT_EQ(fine.exitCode(), 0) << fine.out << fine.err;
    EXPECT_TRUE(std::regex_search(fine.out, std::regex(R"(# Avg bus bandwidth    : \S+ OK\n)")))
        << fine.out;
  }
}

// -T: a call that waits longer fails the run, well before Weft's default of 300 s. Rank 1 is
// stopped once rank 0 has printed more rows than one sweep has (-N 0 repeats it), so rank 0
// waits for it; rank 1 continues a while later, its peer gone.
TEST(WeftPerfEndToEnd, TimeoutEndsARunThatWaits) {
  std::atomic<pid_t> stopped{0};
  std::thread resume;
  ProcessResult r =
      runProcess({WEFT_RUN_PATH, "-n", "2", "--timeout", "100", WEFT_PERF_PATH, "all_reduce", "-b",
                  "1K", "-e", "2K", "-f", "2", "-N", "0", "-T", "2"},
                 kDeadline, [&](pid_t, const std::string& out) {
                   if (rows(out).size() < 3) return false;
                   pid_t rank1 = static_cast<pid_t>(rankPids(out)[1]);
                   ::kill(rank1, SIGSTOP);
                   stopped = rank1;
                   resume = std::thread([rank1] {
                     std::this_thread::sleep_for(std::chrono::seconds(8));
                     ::kill(rank1, SIGCONT);
                   });
                   return true;
                 });
  if (resume.joinable()) resume.join();
  ASSERT_NE(stopped.load(), 0) << r.out << r.err;
  EXPECT_NE(r.exitCode(), 0) << r.out << r.err;
  EXPECT_FALSE(r.killedAtDeadline);
  EXPECT_LT(r.seconds, 60) << r.err;
  EXPECT_TRUE(contains(r.err, "weft-perf: rank 0: ")) << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(timed out \(WEFT_TIMEOUT\): .*after 2\.0 s)")))
      << r.err;
}

// weft-perf's own agreement (barriers, times, wrong counts, rank lines) stays out of the COLL
// log: its lines name only the measured all_reduce of float32.
TEST(WeftPerfEndToEnd, CollLogShowsOnlyTheMeasuredCalls) {
  ScopedEnv level("WEFT_DEBUG", "TRACE");
  ScopedEnv subsys("WEFT_DEBUG_SUBSYS", "COLL");
  for (const char* threads : {"1", "2"}) {
    ProcessResult r = perf(2, {"all_reduce", "-b", "4K", "-e", "4K", "-n", "2", "-w", "1", "-t",
                               threads, "-d", "float32"});
    ASSERT_EQ(r.exitCode(), 0) << r.out << r.err;
    int measured = 0;
    for (const std::string& line : splitLines(r.err)) {
      if (!contains(line, " WEFT ")) continue;
      EXPECT_TRUE(contains(line, "all_reduce #") && contains(line, " x float32 sum")) << line;
      ++measured;
    }
    EXPECT_GT(measured, 0) << r.err;
  }
}

}  // namespace
}  // namespace weft::test
