// Every collective with ranks as threads of one process (weftCommInitAll), and once more with
// every call issued on a CPU stream.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "tests/api/collective_checks.h"
#include "weft/weft.h"

namespace weft::test {
namespace {

using Param = std::tuple<Coll, int, bool>;

class CollectivesThreads : public ::testing::TestWithParam<Param> {};

TEST_P(CollectivesThreads, MatchesReference) {
  const auto [coll, nranks, useStream] = GetParam();
  std::vector<weftComm_t> comms(static_cast<size_t>(nranks), nullptr);
  ASSERT_EQ(weftCommInitAll(comms.data(), nranks, nullptr), weftSuccess)
      << weftGetLastError(nullptr);
  std::vector<std::thread> threads;
  for (int r = 0; r < nranks; ++r) {
    threads.emplace_back([&, r, coll = coll, useStream = useStream, nranks = nranks] {
      weftStream_t stream = nullptr;
      if (useStream) {
        ASSERT_EQ(weftStreamCreate(&stream), weftSuccess);
      }
      checkCollective(comms[r], coll, standardCounts(coll, nranks), stream);
      if (stream != nullptr) {
        EXPECT_EQ(weftStreamDestroy(stream), weftSuccess);
      }
    });
  }
  for (auto& t : threads)
    t.join();
  for (weftComm_t c : comms)
    EXPECT_EQ(weftCommDestroy(c), weftSuccess);
}

std::string paramName(const ::testing::TestParamInfo<Param>& info) {
  return std::string(nameOf(std::get<0>(info.param))) + "_threads" +
         std::to_string(std::get<1>(info.param)) + (std::get<2>(info.param) ? "_stream" : "");
}

INSTANTIATE_TEST_SUITE_P(All, CollectivesThreads,
                         ::testing::Combine(::testing::ValuesIn(kAllColls),
                                            ::testing::Values(1, 3, 4), ::testing::Values(false)),
                         paramName);
INSTANTIATE_TEST_SUITE_P(Stream, CollectivesThreads,
                         ::testing::Combine(::testing::ValuesIn(kAllColls), ::testing::Values(2),
                                            ::testing::Values(true)),
                         paramName);

}  // namespace
}  // namespace weft::test
