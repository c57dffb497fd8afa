// Every collective with 1, 2, 3, 4, 5 and 8 ranks as processes (oversubscribed on small
// machines), over shared memory and over tcp, for every type, operator, count and placement;
// and over shared memory with buffers from weftMemAlloc ("mapped": the larger counts then go
// mapped instead of staged), at 2, 3 and 5 ranks.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "tests/api/collective_checks.h"
#include "tests/api/process_ranks.h"
#include "weft/weft.h"

namespace weft::test {
namespace {

using Param = std::tuple<Coll, int, const char*>;

bool mapped(const std::string& transport) {
  return transport == "mapped";
}

class CollectivesMp : public ::testing::TestWithParam<Param> {};

TEST_P(CollectivesMp, MatchesReference) {
  const auto [coll, nranks, transport] = GetParam();
  auto results = runProcesses(
      nranks, {{"WEFT_TRANSPORT", mapped(transport) ? "shm" : transport}, {"WEFT_TIMEOUT", "120"}},
      [coll = coll, transport = transport](int rank) {
        useWeftMemAlloc(mapped(transport));
        weftComm_t comm = nullptr;
        weftResult_t r = weftCommInitFromEnv(&comm);
        ASSERT_EQ(r, weftSuccess) << "rank " << rank << ": " << weftGetLastError(nullptr);
        int n = 0;
        weftCommCount(comm, &n);
        checkCollective(comm, coll, standardCounts(coll, n));
        EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
      });
  expectAllOk(results);
}

std::string paramName(const ::testing::TestParamInfo<Param>& info) {
  return std::string(nameOf(std::get<0>(info.param))) + "_np" +
         std::to_string(std::get<1>(info.param)) + "_" + std::get<2>(info.param);
}

INSTANTIATE_TEST_SUITE_P(All, CollectivesMp,
                         ::testing::Combine(::testing::ValuesIn(kAllColls),
                                            ::testing::Values(1, 2, 3, 4, 5, 8),
                                            ::testing::Values("shm", "tcp")),
                         paramName);
INSTANTIATE_TEST_SUITE_P(Mapped, CollectivesMp,
                         ::testing::Combine(::testing::Values(Coll::kAllReduce, Coll::kBroadcast,
                                                              Coll::kReduce, Coll::kReduceScatter,
                                                              Coll::kAllGather, Coll::kAllToAll),
                                            ::testing::Values(2, 3, 5),
                                            ::testing::Values("mapped")),
                         paramName);

}  // namespace
}  // namespace weft::test
