// Soak (label soak): for WEFT_SOAK_SECONDS (default 15), rounds of 2 to 4 ranks over shm or
// tcp make random calls: a collective of any kind, type, operator, count up to 1M elements,
// root, in place or not, blocking or on a stream; sends and receives between every pair; and
// now and then the same on a communicator split off the first. Every result is checked against
// the reference (tests/api/reference.h). The calls come from a seed every rank of a round
// shares; WEFT_SOAK_SEED changes the run. CI runs it for three minutes.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "tests/api/collective_checks.h"
#include "tests/api/process_ranks.h"
#include "tests/api/reference.h"
#include "weft/weft.h"

namespace weft::test {
namespace {

constexpr int kCallsPerRound = 40;

double soakSeconds() {
  const char* s = getenv("WEFT_SOAK_SECONDS");
  return s != nullptr ? strtod(s, nullptr) : 15.0;
}

uint32_t soakSeed() {
  const char* s = getenv("WEFT_SOAK_SEED");
  return s != nullptr ? static_cast<uint32_t>(strtoul(s, nullptr, 10)) : 7u;
}

template <typename T, size_t N>
T pick(std::mt19937& rng, const T (&choices)[N]) {
  return choices[std::uniform_int_distribution<size_t>(0, N - 1)(rng)];
}

// One random call on comm, drawn from rng (whose state every rank shares), checked.
void randomCall(std::mt19937& rng, weftComm_t comm, weftStream_t stream) {
  int n = 0;
  ASSERT_EQ(weftCommCount(comm, &n), weftSuccess);
  if (std::uniform_int_distribution<int>(0, 9)(rng) == 0) {
    checkSendRecv(comm);
    return;
  }
  static const size_t kCounts[] = {0, 1, 7, 1023, 4099, 65539, 1u << 20};
  const Coll coll = pick(rng, kAllColls);
  const weftDataType_t type = pick(rng, kAllTypes);
  const size_t count = pick(rng, kCounts);
  // Operators other than sum at the largest count only for the types checkCollective allows.
  const bool anyOp = count < (1u << 20) || type == weftInt32 || type == weftFloat32;
  const weftRedOp_t op = anyOp ? pick(rng, kAllOps) : weftSum;
  const bool inPlace = std::uniform_int_distribution<int>(0, 1)(rng) == 1;
  const int root = std::uniform_int_distribution<int>(0, n - 1)(rng);
  const bool onStream = std::uniform_int_distribution<int>(0, 3)(rng) == 0;
  checkOneCall(comm, coll, type, op, count, inPlace, root, onStream ? stream : nullptr);
}

void soakRank(uint32_t seed, int rank) {
  weftComm_t comm = nullptr;
  ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess) << weftGetLastError(nullptr);
  weftStream_t stream = nullptr;
  ASSERT_EQ(weftStreamCreate(&stream), weftSuccess);
  std::mt19937 rng(seed);
  int nranks = 0;
  ASSERT_EQ(weftCommCount(comm, &nranks), weftSuccess);
  for (int i = 0; i < kCallsPerRound && !::testing::Test::HasFailure(); ++i) {
    if (nranks > 2 && std::uniform_int_distribution<int>(0, 19)(rng) == 0) {
      // A few calls on a split: two colours, in reverse rank order.
      const int splitAt = std::uniform_int_distribution<int>(1, nranks - 1)(rng);
      std::mt19937 subRng(static_cast<uint32_t>(rng()));
      weftComm_t sub = nullptr;
      ASSERT_EQ(weftCommSplit(comm, rank < splitAt ? 0 : 1, -rank, &sub, nullptr), weftSuccess)
          << weftGetLastError(comm);
      for (int k = 0; k < 3; ++k) {
        // Each colour draws its own calls; both groups' ranks share their generator's state.
        std::mt19937 colourRng(subRng() + (rank < splitAt ? 0u : 1u));
        randomCall(colourRng, sub, stream);
      }
      EXPECT_EQ(weftCommDestroy(sub), weftSuccess);
      continue;
    }
    randomCall(rng, comm, stream);
  }
  EXPECT_EQ(weftStreamDestroy(stream), weftSuccess);
  EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
}

TEST(Soak, RandomCallsAreRightForAWhile) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(soakSeconds());
  std::mt19937 rounds(soakSeed());
  int round = 0;
  while (std::chrono::steady_clock::now() < end && !HasFailure()) {
    const int nranks = std::uniform_int_distribution<int>(2, 4)(rounds);
    const char* transport = std::uniform_int_distribution<int>(0, 1)(rounds) == 0 ? "shm" : "tcp";
    const uint32_t seed = static_cast<uint32_t>(rounds());
    SCOPED_TRACE(testing::Message() << "round " << round << ": " << nranks << " ranks over "
                                    << transport << ", calls from seed " << seed);
    expectAllOk(runProcesses(
        nranks, {{"WEFT_TRANSPORT", transport}}, [seed](int rank) { soakRank(seed, rank); }, 300));
    ++round;
  }
  printf("soak: %d rounds of %d calls\n", round, kCallsPerRound);
}

}  // namespace
}  // namespace weft::test
