// weft-trace and the dumps it reads. First its analysis on dumps written here by hand, whose
// conclusions are worked out from the scenario; then real ranks that hang or disagree, their
// dumps (WEFT_TRACE_DUMP, on error and on SIGUSR1), and what the weft-trace binary says of them.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/api/process_ranks.h"
#include "tools/weft_trace/analysis.h"
#include "tools/weft_trace/dump.h"
#include "weft/weft.h"

namespace weft::test {
namespace {

using trace::RankDump;
using trace::TracedCall;

TracedCall collective(int64_t n, const std::string& call, const std::string& state) {
  TracedCall c;
  c.id = static_cast<uint64_t>(n) + 1;
  c.kind = call.substr(0, call.find(' '));
  c.call = call;
  c.collective = n;
  c.state = state;
  c.startedUs = state == "enqueued" ? 0 : 1e6;
  return c;
}

RankDump dumpOf(int rank, int nranks, std::vector<TracedCall> calls) {
  RankDump d;
  d.comm = "00000000000000aa";
  d.rank = rank;
  d.nranks = nranks;
  d.host = "h";
  d.pid = 100 + rank;
  d.reason = "error";
  d.timeUs = 3e6;
  d.calls = std::move(calls);
  return d;
}

const std::string kSum = "all_reduce (8 x float32 sum)";

TEST(WeftTraceAnalysis, RanksTextGroupsRuns) {
  EXPECT_EQ(trace::ranksText({2}), "rank 2");
  EXPECT_EQ(trace::ranksText({3, 0}), "ranks 0 and 3");
  EXPECT_EQ(trace::ranksText({0, 1}), "ranks 0 and 1");
  EXPECT_EQ(trace::ranksText({9, 0, 1, 2, 3, 4, 5, 7}), "ranks 0-5, 7 and 9");
}

TEST(WeftTraceAnalysis, NamesTheRankBehindAndWhatItDoes) {
  // Ranks 0 and 2 are in collective #2; rank 1 finished #1 and is stuck in a send.
  TracedCall send;
  send.id = 9;
  send.kind = "send";
  send.call = "send to rank 0 (4 x int32)";
  send.state = "started";
  send.startedUs = 1e6;  // 2 s before the dump at 3 s
  std::vector<RankDump> dumps = {
      dumpOf(0, 3,
             {collective(0, kSum, "finished"), collective(1, kSum, "finished"),
              collective(2, kSum, "failed")}),
      dumpOf(1, 3, {collective(0, kSum, "finished"), collective(1, kSum, "finished"), send}),
      dumpOf(2, 3,
             {collective(0, kSum, "finished"), collective(1, kSum, "finished"),
              collective(2, kSum, "started")}),
  };
  dumps[1].error = "";
  dumps[1].reason = "signal";
  const std::string report = trace::analyze(dumps);
  EXPECT_NE(report.find("behind: rank 1 is at collective #1 where ranks 0 and 2 are at #2 (" +
                        kSum + ")"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("rank 1: last collective all_reduce #1 (8 x float32 sum) finished; in "
                        "send to rank 0 (4 x int32), started 2.0 s before its dump"),
            std::string::npos)
      << report;
  EXPECT_EQ(report.find("first difference"), std::string::npos) << report;
  EXPECT_NE(report.find("no error; dumped on signal"), std::string::npos) << report;
}

TEST(WeftTraceAnalysis, NamesTheFirstCollectiveCalledDifferently) {
  const std::string bcast = "broadcast (8 x float32, root 0)";
  std::vector<RankDump> dumps = {
      dumpOf(0, 4, {collective(0, kSum, "finished"), collective(1, kSum, "failed")}),
      dumpOf(1, 4, {collective(0, kSum, "finished"), collective(1, bcast, "failed")}),
      dumpOf(3, 4,
             {collective(0, kSum, "finished"), collective(1, kSum, "failed"),
              collective(2, bcast, "enqueued")}),
  };
  const std::string report = trace::analyze(dumps);
  EXPECT_NE(report.find("first difference: collective #1: ranks 0 and 3 called " + kSum +
                        "; rank 1 called " + bcast),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("no dump from rank 2"), std::string::npos) << report;
  // #2 was enqueued on rank 3 but never started: nobody is behind.
  EXPECT_EQ(report.find("behind"), std::string::npos) << report;
}

TEST(WeftTraceAnalysis, KeepsEachRanksLatestDumpAndSeparatesCommunicators) {
  RankDump early = dumpOf(0, 2, {collective(0, kSum, "started")});
  early.timeUs = 1e6;
  RankDump late = dumpOf(0, 2, {collective(0, kSum, "finished"), collective(1, kSum, "started")});
  RankDump peer = dumpOf(1, 2, {collective(0, kSum, "finished"), collective(1, kSum, "started")});
  RankDump other = dumpOf(0, 1, {});
  other.comm = "00000000000000bb";
  const std::string report = trace::analyze({early, late, peer, other});
  EXPECT_NE(report.find("communicator 00000000000000aa, 2 ranks: dumps from ranks 0 and 1"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("every rank reached collective #1"), std::string::npos) << report;
  EXPECT_NE(report.find("communicator 00000000000000bb, 1 ranks: dumps from rank 0"),
            std::string::npos)
      << report;
}

TEST(WeftTraceAnalysis, RejectsWhatIsNotADump) {
  RankDump d;
  std::string error;
  EXPECT_FALSE(trace::parseDump("{}", "a.json", &d, &error));
  EXPECT_NE(error.find("not a Weft trace dump"), std::string::npos) << error;
  EXPECT_FALSE(trace::parseDump("{\"weft_trace\": 1", "b.json", &d, &error));
  EXPECT_NE(error.find("b.json"), std::string::npos) << error;
  EXPECT_FALSE(
      trace::parseDump(R"({"weft_trace": 1, "comm": "a", "rank": 5, "nranks": 2, "calls": []})",
                       "c.json", &d, &error));
  EXPECT_NE(error.find("out of range"), std::string::npos) << error;
}

// --- Real ranks ---

struct TempDir {
  std::string path;
  TempDir() {
    char name[] = "/tmp/weft-trace-test-XXXXXX";
    path = mkdtemp(name);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The dumps in dir, one per file.
std::vector<nlohmann::json> dumpsIn(const std::string& dir) {
  std::vector<nlohmann::json> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".json") out.push_back(nlohmann::json::parse(readFile(e.path())));
  }
  return out;
}

// weft-trace's output and exit status.
std::pair<std::string, int> runWeftTrace(const std::string& args) {
  const std::string command = std::string(WEFT_TRACE_PATH) + " " + args + " 2>&1";
  FILE* p = popen(command.c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
    out.append(buf, n);
  const int status = pclose(p);
  return {out, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

// Rank 2 of 3 makes two all-reduces where the others make three, and dumps on SIGUSR1 while it
// waits; the others fail in the third and dump: the first to time out closes its links, so the
// other may fail on the closed link before its own timeout. weft-trace names rank 2 as behind.
TEST(WeftTraceRanks, ATimeoutDumpsAndTheRankBehindIsNamed) {
  TempDir dir;
  const std::string prefix = dir.path + "/t-";
  auto results = runProcesses(
      3, {{"WEFT_TIMEOUT", "2"}, {"WEFT_TRACE_DUMP", prefix}, {"WEFT_TRANSPORT", "tcp"}},
      [&](int rank) {
        weftComm_t comm = nullptr;
        ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess);
        std::vector<float> data(1000, 1.0f);
        // A send and receive around the ring first, so the dump holds point-to-point calls.
        std::vector<float> in(10);
        ASSERT_EQ(weftGroupStart(), weftSuccess);
        ASSERT_EQ(weftSend(data.data(), 10, weftFloat32, (rank + 1) % 3, comm, nullptr),
                  weftSuccess);
        ASSERT_EQ(weftRecv(in.data(), 10, weftFloat32, (rank + 2) % 3, comm, nullptr), weftSuccess);
        ASSERT_EQ(weftGroupEnd(), weftSuccess);
        for (int i = 0; i < 2; ++i) {
          ASSERT_EQ(
              weftAllReduce(data.data(), data.data(), 1000, weftFloat32, weftSum, comm, nullptr),
              weftSuccess);
        }
        if (rank == 2) {
          raise(SIGUSR1);
          // Its file has the communicator's tag in its name: wait for any file of rank 2.
          bool written = false;
          for (int i = 0; i < 250 && !written; ++i) {
            for (const auto& e : std::filesystem::directory_iterator(dir.path)) {
              written = written || e.path().string().ends_with(".r2.json");
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
          }
          EXPECT_TRUE(written);
          std::this_thread::sleep_for(std::chrono::seconds(4));  // past the others' timeout
          weftCommAbort(comm);
          return;
        }
        EXPECT_NE(
            weftAllReduce(data.data(), data.data(), 1000, weftFloat32, weftSum, comm, nullptr),
            weftSuccess);
        const std::string error = weftGetLastError(comm);
        EXPECT_NE(error.find("(trace: " + prefix), std::string::npos) << error;
        weftCommAbort(comm);
      });
  expectAllOk(results);

  const std::vector<nlohmann::json> dumps = dumpsIn(dir.path);
  ASSERT_EQ(dumps.size(), 3u);
  for (const nlohmann::json& d : dumps) {
    const int rank = d.at("rank").get<int>();
    EXPECT_EQ(d.at("reason"), rank == 2 ? "signal" : "error");
    const nlohmann::json& calls = d.at("calls");
    ASSERT_EQ(calls.size(), rank == 2 ? 4u : 5u) << d.dump(1);
    EXPECT_EQ(calls[0].at("kind"), "send");
    EXPECT_EQ(calls[0].at("call"),
              "send to rank " + std::to_string((rank + 1) % 3) + " (10 x float32)");
    EXPECT_EQ(calls[1].at("kind"), "recv");
    EXPECT_EQ(calls[1].at("state"), "finished");
    for (int i = 0; i < 2; ++i) {
      EXPECT_EQ(calls[2 + i].at("collective"), i);
      EXPECT_EQ(calls[2 + i].at("call"), "all_reduce (1000 x float32 sum)");
      EXPECT_EQ(calls[2 + i].at("state"), "finished");
      EXPECT_FALSE(calls[2 + i].at("how").get<std::string>().empty());
    }
    if (rank != 2) {
      EXPECT_EQ(calls[4].at("collective"), 2);
      EXPECT_EQ(calls[4].at("state"), "failed");
      EXPECT_FALSE(d.at("error").get<std::string>().empty());
    }
  }
  auto [report, code] = runWeftTrace(dir.path);
  EXPECT_EQ(code, 0) << report;
  EXPECT_NE(report.find("3 ranks: dumps from ranks 0-2"), std::string::npos) << report;
  EXPECT_NE(report.find("behind: rank 2 is at collective #1 where ranks 0 and 1 are at #2 "
                        "(all_reduce (1000 x float32 sum))"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("rank 2: last collective all_reduce #1 (1000 x float32 sum) finished; "
                        "nothing running"),
            std::string::npos)
      << report;
  EXPECT_EQ(report.find("first difference"), std::string::npos) << report;
}

// Rank 1 broadcasts where ranks 0 and 2 all-reduce: every rank fails, and weft-trace names the
// collective and both calls.
TEST(WeftTraceRanks, AMismatchIsNamedFromTheDumps) {
  TempDir dir;
  auto results = runProcesses(
      3, {{"WEFT_TIMEOUT", "5"}, {"WEFT_TRACE_DUMP", dir.path + "/"}, {"WEFT_TRANSPORT", "tcp"}},
      [&](int rank) {
        weftComm_t comm = nullptr;
        ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess);
        std::vector<float> data(64, 1.0f);
        ASSERT_EQ(weftAllReduce(data.data(), data.data(), 64, weftFloat32, weftSum, comm, nullptr),
                  weftSuccess);
        weftResult_t r =
            rank == 1
                ? weftBroadcast(data.data(), data.data(), 64, weftFloat32, 0, comm, nullptr)
                : weftAllReduce(data.data(), data.data(), 64, weftFloat32, weftSum, comm, nullptr);
        if (r == weftSuccess) {  // a rank whose part completed fails at its next call
          r = weftAllReduce(data.data(), data.data(), 64, weftFloat32, weftSum, comm, nullptr);
        }
        EXPECT_NE(r, weftSuccess);
        weftCommAbort(comm);
      });
  expectAllOk(results);
  auto [report, code] = runWeftTrace(dir.path);
  EXPECT_EQ(code, 0) << report;
  EXPECT_NE(report.find("first difference: collective #1: ranks 0 and 2 called all_reduce (64 x "
                        "float32 sum); rank 1 called broadcast (64 x float32, root 0)"),
            std::string::npos)
      << report;
}

TEST(WeftTraceTool, UnreadableInputIsAnErrorNamingTheFile) {
  TempDir dir;
  const std::string bad = dir.path + "/bad.json";
  std::ofstream(bad) << "{\"weft_trace\": 1, \"comm\": ";
  auto [out, code] = runWeftTrace(bad);
  EXPECT_EQ(code, 2);
  EXPECT_NE(out.find("bad.json"), std::string::npos) << out;
  auto [none, noneCode] = runWeftTrace(dir.path + "/missing.json");
  EXPECT_EQ(noneCode, 2);
  EXPECT_NE(none.find("cannot read"), std::string::npos) << none;
}

}  // namespace
}  // namespace weft::test
