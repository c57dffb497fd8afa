// weft-perf under weft-run against the real library: exit codes, the table, validation.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

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

// The table rows rank 0 printed, split into columns (weft-run's "[0]" prefix removed).
std::vector<std::vector<std::string>> rows(const std::string& out) {
  std::vector<std::vector<std::string>> table;
  for (const std::string& line : splitLines(out)) {
    if (line.rfind("[0] ", 0) != 0 || line.rfind("[0] #", 0) == 0) continue;
    std::vector<std::string> cols;
    std::istringstream in(line.substr(4));
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
      bool inPlaceChecked = name != "all_to_all" && name != "sendrecv" && name != "send";
      EXPECT_EQ(c[12], inPlaceChecked ? "0" : "N/A") << coll;
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

}  // namespace
}  // namespace weft::test
