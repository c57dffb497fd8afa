// Which way a collective of an all-local communicator goes, by size: through the shared slots
// (direct), chunk by chunk through the staging areas (staged), or as a schedule over the rings
// when staging is off; the trace log names the path. Results are checked either way.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/api/process_ranks.h"
#include "weft/weft.h"

namespace weft::test {
namespace {

// An all-reduce of `count` int32 on 3 ranks, checked exactly.
void allReduce(weftComm_t comm, int rank, size_t count) {
  std::vector<int32_t> v(count);
  for (size_t i = 0; i < count; ++i)
    v[i] = static_cast<int32_t>(i % 1000) * (rank + 1);
  std::vector<int32_t> out(count);
  ASSERT_EQ(weftAllReduce(v.data(), out.data(), count, weftInt32, weftSum, comm, nullptr),
            weftSuccess)
      << weftGetLastError(comm);
  for (size_t i = 0; i < count; i += 101)
    ASSERT_EQ(out[i], static_cast<int32_t>(i % 1000) * 6) << "element " << i;
}

struct PathCase {
  const char* stagingBytes;
  const char* small;  // the path of a 4 KiB all-reduce
  const char* large;  // the path of a 4 MiB all-reduce
};

class Paths : public ::testing::TestWithParam<PathCase> {};

TEST_P(Paths, BySize) {
  const PathCase c = GetParam();
  const RankFiles logs("paths-test");
  auto results = runProcesses(3,
                              {{"WEFT_DEBUG", "TRACE"},
                               {"WEFT_DEBUG_SUBSYS", "COLL"},
                               {"WEFT_SHM_STAGING_BYTES", c.stagingBytes}},
                              [&](int rank) {
                                logs.route(rank);
                                weftComm_t comm = nullptr;
                                ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess);
                                allReduce(comm, rank, 1024);
                                allReduce(comm, rank, 1u << 20);
                                EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
                              });
  expectAllOk(results);
  for (int rank = 0; rank < 3; ++rank) {
    std::string text = logs.take(rank);
    EXPECT_NE(text.find("(1024 x int32 sum, " + std::string(c.small) + ")"), std::string::npos)
        << text;
    EXPECT_NE(text.find("(1048576 x int32 sum, " + std::string(c.large) + ")"), std::string::npos)
        << text;
  }
}

INSTANTIATE_TEST_SUITE_P(All, Paths,
                         ::testing::Values(PathCase{"2M", "direct", "staged"},
                                           PathCase{"0", "direct", "ring"}),
                         [](const auto& info) {
                           return std::string(info.param.stagingBytes) == "0" ? "StagingOff"
                                                                              : "Default";
                         });

// Ranks that disagree on the count of a staged all-reduce get an error, not a hang or a copy
// of the wrong size.
TEST(Paths, MismatchedStagedCountsFail) {
  auto results = runProcesses(2, {{"WEFT_TIMEOUT", "20"}}, [](int rank) {
    weftComm_t comm = nullptr;
    ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess);
    const size_t count = (1u << 20) + static_cast<size_t>(rank);
    std::vector<float> v(count, 1.0f);
    weftResult_t r = weftAllReduce(v.data(), v.data(), count, weftFloat32, weftSum, comm, nullptr);
    EXPECT_EQ(r, weftInvalidUsage) << weftGetErrorString(r) << ": " << weftGetLastError(comm);
    EXPECT_EQ(weftCommAbort(comm), weftSuccess);
  });
  expectAllOk(results);
}

}  // namespace
}  // namespace weft::test
