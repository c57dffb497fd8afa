// Communicators whose hosts (WEFT_HOSTID) hold different numbers of ranks. Every layout of 2-8
// ranks over 1-4 hosts in four families (hosts in contiguous blocks, ranks dealt round the
// hosts, one rank alone, one host holding all but one), up to the naming of hosts, runs every
// collective and every pair of sends and receives, checked against the reference. Ranks that
// took a decision from their own view of the machine (whether to measure the links, say) would
// disagree here on what they exchange.
//
// And settings that change what ranks exchange must be set alike on every rank: a difference
// fails init on every rank with a message that names it, instead of a hang or a wrong result.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "tests/api/collective_checks.h"
#include "tests/api/process_ranks.h"
#include "weft/weft.h"

namespace weft::test {
namespace {

// Hosts named 'A', 'B', ... in the order their first rank comes.
std::string canonical(const std::vector<int>& hostOf) {
  std::vector<int> names;
  std::string out;
  for (int h : hostOf) {
    auto it = std::find(names.begin(), names.end(), h);
    if (it == names.end()) it = names.insert(names.end(), h);
    out += static_cast<char>('A' + (it - names.begin()));
  }
  return out;
}

std::vector<std::string> allLayouts() {
  std::set<std::string> out;
  for (int n = 2; n <= 8; ++n) {
    for (int h = 1; h <= std::min(4, n); ++h) {
      std::vector<int> contiguous, dealt, aloneFirst, aloneLast, allButOne;
      for (int r = 0; r < n; ++r) {
        contiguous.push_back(r * h / n);
        dealt.push_back(r % h);
        if (h > 1) {
          aloneFirst.push_back(r == 0 ? 0 : 1 + (r - 1) * (h - 1) / (n - 1));
          aloneLast.push_back(r == n - 1 ? h - 1 : r * (h - 1) / (n - 1));
        }
        allButOne.push_back(std::max(0, r - (n - h)));
      }
      for (const auto* l : {&contiguous, &dealt, &aloneFirst, &aloneLast, &allButOne}) {
        if (!l->empty()) out.insert(canonical(*l));
      }
    }
  }
  return {out.begin(), out.end()};
}

TEST(Layouts, CoverTheFamiliesAndTheReportedCases) {
  const std::vector<std::string> layouts = allLayouts();
  for (const char* l : {"AB", "AAB", "ABA", "ABBB", "AABB", "ABAB", "ABC", "AABBC", "AAAAAAAB",
                        "AAAAAABC", "ABBBBCCC", "ABCDABCD", "AAAAABCD"}) {
    EXPECT_NE(std::find(layouts.begin(), layouts.end(), l), layouts.end()) << l;
  }
  for (const std::string& l : layouts) {
    EXPECT_GE(l.size(), 2u);
    EXPECT_LE(l.size(), 8u);
    EXPECT_LE(*std::max_element(l.begin(), l.end()), 'D') << l;
  }
}

class Layout : public ::testing::TestWithParam<std::string> {};

TEST_P(Layout, EveryCollectiveMatchesTheReference) {
  const std::string layout = GetParam();
  const int n = static_cast<int>(layout.size());
  auto results = runProcesses(n, {{"WEFT_TIMEOUT", "60"}}, [&](int rank) {
    setenv("WEFT_HOSTID", (std::string("layout-") + layout[rank]).c_str(), 1);
    weftComm_t comm = nullptr;
    ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess) << weftGetLastError(nullptr);
    for (Coll coll : kAllColls) {
      SCOPED_TRACE(nameOf(coll));
      const bool perRank = coll == Coll::kReduceScatter || coll == Coll::kAllGather ||
                           coll == Coll::kAllToAll || coll == Coll::kAllToAllv;
      // A large count that goes by chunks: per rank where the count is per rank.
      const size_t large = perRank ? 40009 / static_cast<size_t>(n) | 1 : 40009;
      checkCollective(comm, coll, {1, 7, 1023, large}, nullptr, {weftInt32, weftFloat16});
      if (::testing::Test::HasFatalFailure()) return;
    }
    checkSendRecv(comm);
    EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
  });
  expectAllOk(results);
}

std::string layoutName(const ::testing::TestParamInfo<std::string>& info) {
  return info.param;
}

INSTANTIATE_TEST_SUITE_P(UpTo8RanksOn4Hosts, Layout, ::testing::ValuesIn(allLayouts()), layoutName);

// One rank sets a setting otherwise: every rank's init fails, and the message names it.
struct Mismatch {
  const char* variable;
  const char* value;
};

// Each rank's init error ("code: message"), with `all` set on every rank and `rank2` on rank 2.
std::vector<std::string> initErrors(const EnvList& all, const EnvList& rank2) {
  const RankFiles errors("settings-test");
  auto results = runProcesses(3, all, [&](int rank) {
    for (const auto& [name, value] : rank == 2 ? rank2 : EnvList{})
      setenv(name.c_str(), value.c_str(), 1);
    weftComm_t comm = nullptr;
    const weftResult_t r = weftCommInitFromEnv(&comm);
    EXPECT_NE(r, weftSuccess);
    FILE* f = fopen(errors.path(rank).c_str(), "w");
    ASSERT_NE(f, nullptr);
    fprintf(f, "%s: %s", weftGetErrorString(r), weftGetLastError(nullptr));
    fclose(f);
  });
  expectAllOk(results);
  std::vector<std::string> out;
  out.reserve(3);
  for (int r = 0; r < 3; ++r)
    out.push_back(errors.take(r));
  return out;
}

class SettingsDiffer : public ::testing::TestWithParam<Mismatch> {};

TEST_P(SettingsDiffer, FailInitOnEveryRankNamingTheSetting) {
  const Mismatch m = GetParam();
  for (const std::string& text : initErrors({{"WEFT_TIMEOUT", "20"}}, {{m.variable, m.value}})) {
    EXPECT_EQ(text.find(weftGetErrorString(weftInvalidUsage)), 0u) << text;
    EXPECT_NE(text.find(std::string(m.variable) + " "), std::string::npos) << text;
    EXPECT_NE(text.find(std::string("rank 2 has '") + m.value + "'"), std::string::npos) << text;
  }
}

std::string mismatchName(const ::testing::TestParamInfo<Mismatch>& info) {
  return std::string(info.param.variable) + "_" + std::to_string(info.index);
}

INSTANTIATE_TEST_SUITE_P(OnOneRank, SettingsDiffer,
                         ::testing::Values(Mismatch{"WEFT_TRANSPORT", "tcp"},
                                           Mismatch{"WEFT_ALGO", "tree"},
                                           Mismatch{"WEFT_ALGO", "no-such-algorithm"},
                                           Mismatch{"WEFT_CHUNK_BYTES", "4096"},
                                           Mismatch{"WEFT_HIERARCHY", "off"},
                                           Mismatch{"WEFT_CALIBRATE", "0"}),
                         mismatchName);

// A bad value on every rank fails every rank's init alike, and at once.
TEST(Settings, ABadValueEverywhereFailsEveryRank) {
  for (const std::string& text :
       initErrors({{"WEFT_TIMEOUT", "20"}, {"WEFT_ALGO", "allreduce:warp"}}, {})) {
    EXPECT_NE(text.find("warp"), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace weft::test
