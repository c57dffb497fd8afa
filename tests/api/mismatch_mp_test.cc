// Ranks that make different calls (type, operator, collective, root, count, or a send against a
// collective) must never get each other's data with success: on every path and transport, each
// rank's call fails, or, where the rank only sends in it (a broadcast root, a send), its next
// call does; and the rank that finds out names both calls. Rank 1 makes the odd call.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/api/process_ranks.h"
#include "weft/weft.h"

namespace weft::test {
namespace {

constexpr int kOdd = 1;

enum class Mismatch { kType, kOp, kCollective, kRoot, kCount, kSend };

struct PathCase {
  const char* name;
  EnvList env;
  size_t count;  // elements per rank
};
void PrintTo(const PathCase& c, std::ostream* os) {
  *os << c.name;
}

const char* mismatchName(Mismatch m) {
  switch (m) {
    case Mismatch::kType:
      return "type";
    case Mismatch::kOp:
      return "operator";
    case Mismatch::kCollective:
      return "collective";
    case Mismatch::kRoot:
      return "root";
    case Mismatch::kCount:
      return "count";
    case Mismatch::kSend:
      return "send";
  }
  return "?";
}

// What each side's call is named in the error (both must appear in some rank's message).
std::vector<std::string> namesOf(Mismatch m) {
  switch (m) {
    case Mismatch::kType:
      return {"float32", "int32"};
    case Mismatch::kOp:
      return {"max", "sum"};
    case Mismatch::kCollective:
      return {"all_gather", "all_reduce"};
    case Mismatch::kRoot:  // at 2 ranks, both roots only send: their next calls name one
      return {"broadcast", "root"};
    case Mismatch::kCount:
      return {"all_reduce"};
    case Mismatch::kSend:  // named by the rank that reads the send, or meets rank 1's next call
      return {"all_reduce", " called "};
  }
  return {};
}

int32_t input(int rank, size_t i) {
  return rank + 1 + static_cast<int32_t>(i % 7);
}

// Whether out[i] == value(i) for every i.
template <typename V, typename F>
bool allEqual(const std::vector<V>& out, F value) {
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] != static_cast<V>(value(i))) return false;
  }
  return true;
}

// An all-reduce of n elements of `type` (int32 or float32) with `op` (sum or max) of input();
// *right says whether the output is what it should be had every rank made the same call.
weftResult_t allReduce(weftComm_t comm, int rank, int nranks, size_t n, weftDataType_t type,
                       weftRedOp_t op, bool* right) {
  const int32_t rankSum = nranks * (nranks + 1) / 2;
  auto expected = [&](size_t i) {
    const auto k = static_cast<int32_t>(i % 7);
    return op == weftMax ? nranks + k : rankSum + nranks * k;
  };
  if (type == weftFloat32) {
    std::vector<float> in(n), out(n);
    for (size_t i = 0; i < n; ++i)
      in[i] = static_cast<float>(input(rank, i));
    weftResult_t r = weftAllReduce(in.data(), out.data(), n, type, op, comm, nullptr);
    *right = allEqual(out, expected);
    return r;
  }
  std::vector<int32_t> in(n), out(n);
  for (size_t i = 0; i < n; ++i)
    in[i] = input(rank, i);
  weftResult_t r = weftAllReduce(in.data(), out.data(), n, type, op, comm, nullptr);
  *right = allEqual(out, expected);
  return r;
}

// This rank's call of the case, on c elements per rank; *right as for allReduce (a send has no
// output).
weftResult_t makeCall(Mismatch m, weftComm_t comm, int rank, int nranks, size_t c, bool* right) {
  const bool odd = rank == kOdd;
  std::vector<int32_t> in(c);
  for (size_t i = 0; i < c; ++i)
    in[i] = input(rank, i);
  *right = true;
  switch (m) {
    case Mismatch::kType:
      return allReduce(comm, rank, nranks, c, odd ? weftFloat32 : weftInt32, weftSum, right);
    case Mismatch::kOp:
      return allReduce(comm, rank, nranks, c, weftInt32, odd ? weftMax : weftSum, right);
    case Mismatch::kCount:
      return allReduce(comm, rank, nranks, odd ? c + 8 : c, weftInt32, weftSum, right);
    case Mismatch::kSend:
      if (odd) return weftSend(in.data(), c, weftInt32, 0, comm, nullptr);
      return allReduce(comm, rank, nranks, c, weftInt32, weftSum, right);
    case Mismatch::kCollective: {  // the same bytes received either way
      if (!odd) return allReduce(comm, rank, nranks, c * nranks, weftInt32, weftSum, right);
      std::vector<int32_t> out(c * static_cast<size_t>(nranks));
      weftResult_t r = weftAllGather(in.data(), out.data(), c, weftInt32, comm, nullptr);
      *right = allEqual(out, [&](size_t i) { return input(static_cast<int>(i / c), i % c); });
      return r;
    }
    case Mismatch::kRoot: {
      const int root = odd ? 1 : 0;
      std::vector<int32_t> out(c);
      weftResult_t r = weftBroadcast(in.data(), out.data(), c, weftInt32, root, comm, nullptr);
      *right = allEqual(out, [&](size_t i) { return input(root, i); });
      return r;
    }
  }
  return weftInternalError;
}

class Mismatches : public ::testing::TestWithParam<std::tuple<PathCase, Mismatch>> {};

TEST_P(Mismatches, FailWithBothCallsNamed) {
  const auto& [path, mismatch] = GetParam();
  for (int nranks : {2, 3}) {
    SCOPED_TRACE(std::to_string(nranks) + " ranks");
    const RankFiles files("mismatch-test");
    EnvList env = path.env;
    env.emplace_back("WEFT_TIMEOUT", "5");
    auto results = runProcesses(
        nranks, env,
        [&](int rank) {
          weftComm_t comm = nullptr;
          ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess);
          bool right = false;
          const weftResult_t call = makeCall(mismatch, comm, rank, nranks, path.count, &right);
          // A rank whose call succeeded must have had the right output, and fails at its next.
          const weftResult_t next = call == weftSuccess ? weftBarrier(comm, nullptr) : call;
          std::ofstream(files.path(rank))
              << (call == weftSuccess) << " " << right << " " << (next == weftSuccess) << "\n"
              << weftGetLastError(comm) << "\n";
          weftCommAbort(comm);
        },
        60);
    expectAllOk(results);
    bool named = false;
    std::string errors;
    for (int rank = 0; rank < nranks; ++rank) {
      std::istringstream text(files.take(rank));
      int callOk = 1, right = 0, nextOk = 1;
      text >> callOk >> right >> nextOk;
      std::string error;
      text >> std::ws;
      std::getline(text, error);
      SCOPED_TRACE("rank " + std::to_string(rank) + ": " + error);
      errors += "\n  rank " + std::to_string(rank) + ": " + error;
      EXPECT_FALSE(callOk && !right) << "success with a wrong result";
      EXPECT_FALSE(nextOk) << "no error by the next call";
      bool all = error.find(" where rank ") != std::string::npos;
      for (const std::string& name : namesOf(mismatch))
        all = all && error.find(name) != std::string::npos;
      named = named || all;
    }
    // Where nobody reads the send and rank 1's next call meets nobody (3 ranks over shm rings:
    // rank 0 receives only from rank 2 and rank 1's barrier goes through the slots), the ranks
    // wait on each other and time out.
    const bool timedOut = errors.find("timed out") != std::string::npos;
    EXPECT_TRUE(named || (mismatch == Mismatch::kSend && timedOut))
        << "no rank named both calls:" << errors;
  }
}

// Calls that legitimately differ between ranks are no mismatch: an all-to-allv in which one rank
// moves nothing (it still counts the call, as the others do), and in place against out of place.
class SameCalls : public ::testing::TestWithParam<const char*> {};

TEST_P(SameCalls, ThatDifferOnlyWhereRanksMayDifferPass) {
  auto results = runProcesses(3, {{"WEFT_TRANSPORT", GetParam()}}, [](int rank) {
    weftComm_t comm = nullptr;
    ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess);
    // Ranks 0 and 1 swap 4 elements; rank 2 neither sends nor receives.
    std::vector<size_t> counts(3, 0), displs(3, 0);
    if (rank < 2) counts[1 - rank] = 4;
    std::vector<int32_t> out(4, -1), in(4, rank + 10);
    ASSERT_EQ(weftAllToAllv(in.data(), counts.data(), displs.data(), out.data(), counts.data(),
                            displs.data(), weftInt32, comm, nullptr),
              weftSuccess)
        << weftGetLastError(comm);
    if (rank < 2) {
      EXPECT_EQ(out, std::vector<int32_t>(4, 11 - rank));
    }
    // Rank 1 in place, the others not.
    std::vector<int32_t> v(1000, rank), r(1000, 0);
    int32_t* dst = rank == 1 ? v.data() : r.data();
    ASSERT_EQ(weftAllReduce(v.data(), dst, v.size(), weftInt32, weftSum, comm, nullptr),
              weftSuccess)
        << weftGetLastError(comm);
    EXPECT_EQ(dst[999], 3);
    EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
  });
  expectAllOk(results);
}

INSTANTIATE_TEST_SUITE_P(Transports, SameCalls, ::testing::Values("shm", "tcp"));

const PathCase kPaths[] = {
    {"shm_direct", {}, 16},
    {"shm_staged", {{"WEFT_DIRECT_BYTES", "0"}}, 16384},
    {"shm_ring",
     {{"WEFT_DIRECT_BYTES", "0"}, {"WEFT_SHM_STAGING_BYTES", "0"}, {"WEFT_ALGO", "ring"}},
     1000},
    {"shm_tree",
     {{"WEFT_DIRECT_BYTES", "0"}, {"WEFT_SHM_STAGING_BYTES", "0"}, {"WEFT_ALGO", "tree"}},
     1000},
    {"tcp_ring", {{"WEFT_TRANSPORT", "tcp"}, {"WEFT_ALGO", "ring"}}, 100000},
    {"tcp_tree", {{"WEFT_TRANSPORT", "tcp"}, {"WEFT_ALGO", "tree"}}, 1000},
    {"tcp_rd", {{"WEFT_TRANSPORT", "tcp"}, {"WEFT_ALGO", "rd"}}, 1000},
};

INSTANTIATE_TEST_SUITE_P(
    EveryPath, Mismatches,
    ::testing::Combine(::testing::ValuesIn(kPaths),
                       ::testing::Values(Mismatch::kType, Mismatch::kOp, Mismatch::kCollective,
                                         Mismatch::kRoot, Mismatch::kCount, Mismatch::kSend)),
    [](const auto& info) {
      return std::string(std::get<0>(info.param).name) + "_" +
             mismatchName(std::get<1>(info.param));
    });

}  // namespace
}  // namespace weft::test
