// Every collective with 1, 2, 3, 4, 5 and 8 ranks as processes (oversubscribed on small
// machines), over shared memory and over tcp, for every type, operator, count and placement;
// and over shared memory with buffers from weftMemAlloc ("mapped": the larger counts then go
// mapped instead of staged), at 2, 3 and 5 ranks; and, where Weft has UCX, over the UCX
// transport at 2, 3 and 5 ranks.
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

// "ucx": every peer over the UCX transport (UCX's choice of its transports).
EnvList transportEnv(const std::string& transport) {
  if (transport == "ucx") return {{"WEFT_TRANSPORT", "tcp"}, {"WEFT_NET", "ucx"}};
  return {{"WEFT_TRANSPORT", mapped(transport) ? "shm" : transport}, {"WEFT_NET", "tcp"}};
}

class CollectivesMp : public ::testing::TestWithParam<Param> {};

TEST_P(CollectivesMp, MatchesReference) {
  const auto [coll, nranks, transport] = GetParam();
  EnvList env = transportEnv(transport);
  env.emplace_back("WEFT_TIMEOUT", "120");
  auto results = runProcesses(nranks, env, [coll = coll, transport = transport](int rank) {
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
#if WEFT_HAVE_UCX
INSTANTIATE_TEST_SUITE_P(Ucx, CollectivesMp,
                         ::testing::Combine(::testing::ValuesIn(kAllColls),
                                            ::testing::Values(2, 3, 5), ::testing::Values("ucx")),
                         paramName);
#endif

}  // namespace
}  // namespace weft::test
