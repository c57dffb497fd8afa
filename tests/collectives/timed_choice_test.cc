// TimedChoice, fed made-up call times, as it chooses between ordinary and non-temporal staging
// (its first and second options): it keeps the kind in use until a call with the other kind is
// clearly faster, explores on the same calls whatever the times, and leaves small calls and
// fixed modes alone.
#include <gtest/gtest.h>

#include "collectives/timed_choice.h"

namespace weft {
namespace {

constexpr size_t kBytes = size_t{8} << 20;
constexpr size_t kBig = size_t{512} << 20;

// Runs `calls` calls of `bytes` in which ordinary staging takes `cached` seconds and streaming
// `streamed`; returns how many calls streamed.
int runAt(TimedChoice& s, size_t bytes, int calls, double cached, double streamed,
          bool inPlace = false) {
  int streams = 0;
  for (int i = 0; i < calls; ++i) {
    const bool stream = s.secondFor(bytes, inPlace);
    streams += stream ? 1 : 0;
    s.record(stream ? streamed : cached);
  }
  return streams;
}

// The same, of kBytes.
int run(TimedChoice& s, int calls, double cached, double streamed, bool inPlace = false) {
  return runAt(s, kBytes, calls, cached, streamed, inPlace);
}

TEST(TimedChoice, FixedModesNeverChange) {
  TimedChoice cached(TimedChoice::Mode::kFirst, "stores", "cached", "streamed");
  TimedChoice streamed(TimedChoice::Mode::kSecond, "stores", "cached", "streamed");
  EXPECT_EQ(run(cached, 100, 1.0, 0.1), 0);
  EXPECT_EQ(run(streamed, 100, 0.1, 1.0), 100);
  EXPECT_FALSE(cached.second());
  EXPECT_TRUE(streamed.second());
}

TEST(TimedChoice, KeepsOrdinaryStoresWhileTheyAreFaster) {
  TimedChoice s;
  // Only the explored calls stream: the size's third timed call and every 16th timed one (the
  // first call is not timed).
  EXPECT_EQ(run(s, 1 + 64, 1.0, 1.3), 5);
  EXPECT_FALSE(s.second());
  // Nor does a small advantage move it.
  EXPECT_EQ(run(s, 64, 1.0, 0.9), 4);
  EXPECT_FALSE(s.second());
}

TEST(TimedChoice, FollowsTheFasterKindBothWays) {
  TimedChoice s;
  run(s, 1 + 15, 1.0, 1.3);
  EXPECT_FALSE(s.second());
  // The cores move apart. The next explored call is compared with the last calls before it,
  // still fast; the one after with slow ones, and streaming takes over.
  EXPECT_EQ(run(s, 17, 3.0, 1.5), 2);
  EXPECT_TRUE(s.second());
  EXPECT_EQ(run(s, 15, 3.0, 1.5), 15);
  // They move back: the next explored call goes ordinary, wins, and ordinary stores stay.
  EXPECT_EQ(run(s, 16, 1.0, 1.3), 0);
  EXPECT_FALSE(s.second());
}

// One slow call of the kind in use does not make the other look faster: the best of the last
// few calls is what an explored one is compared with.
TEST(TimedChoice, ASlowCallDoesNotSwitch) {
  TimedChoice s;
  run(s, 1 + 14, 1.0, 1.1);
  EXPECT_FALSE(s.secondFor(kBytes, false));
  s.record(5.0);                            // call 15: descheduled, say
  EXPECT_TRUE(s.secondFor(kBytes, false));  // call 16 explores
  s.record(1.1);
  EXPECT_FALSE(s.second());
}

TEST(TimedChoice, SmallReductionsAreNotTimed) {
  TimedChoice s;
  for (int i = 0; i < 100; ++i) {
    EXPECT_FALSE(s.secondFor(TimedChoice::kMinBytes - 1, false));
    s.record(100.0);
  }
  EXPECT_EQ(run(s, 3, 1.0, 0.1), 0);  // 8M: not timed, then two timed calls of the kind in use
  EXPECT_EQ(run(s, 1, 1.0, 0.1), 1);  // its third timed call explores, and wins
  EXPECT_TRUE(s.second());
  // Small ones then follow the kind in use.
  EXPECT_TRUE(s.secondFor(1024, false));
}

// A size class's calls are compared only with its own: an explored call of a size whose kind
// in use has too few times yet waits for one that has.
TEST(TimedChoice, ComparesWithinOneSize) {
  TimedChoice s;
  run(s, 1 + 15, 1.0, 1.2);  // 15 timed 8M calls, ordinary
  EXPECT_FALSE(s.second());
  EXPECT_FALSE(s.secondFor(kBig, false));  // its first call: not timed
  s.record(100.0);
  EXPECT_FALSE(s.secondFor(kBig, false));  // the 16th timed call, but 512M has no times yet
  s.record(64.0);
  EXPECT_FALSE(s.secondFor(kBig, false));  // one only
  s.record(64.0);
  EXPECT_TRUE(s.secondFor(kBig, false));  // now it explores: 32 against 64
  s.record(32.0);
  EXPECT_TRUE(s.second());
}

// In place, a size may run faster with either kind than out of place: an explored in-place
// call is compared with in-place ones only.
TEST(TimedChoice, ComparesInPlaceCallsWithInPlaceOnes) {
  TimedChoice s;
  EXPECT_EQ(run(s, 3, 2.0, 1.5), 0);        // not timed, then two timed calls out of place
  EXPECT_EQ(run(s, 4, 1.0, 1.5, true), 1);  // the same in place, then its first explored call
  EXPECT_FALSE(s.second());
}

// Tried in runs (TimedChoice::Trial): the warm-up calls of a try are not compared, however
// fast, and a later call of the same try that wins takes over.
TEST(TimedChoice, ComparesATrysCallsAfterItsWarmUps) {
  TimedChoice s(TimedChoice::Mode::kAuto, "band", "staged", "single copy", {2, 2, true});
  EXPECT_EQ(run(s, 3, 1.0, 0.1), 0);  // not timed, then two timed calls staged
  for (double took : {0.1, 0.1}) {    // the warm-ups: far faster, yet not compared
    EXPECT_TRUE(s.secondFor(kBytes, false));
    s.record(took);
  }
  EXPECT_FALSE(s.second());
  EXPECT_TRUE(s.secondFor(kBytes, false));
  s.record(0.95);  // not fast enough
  EXPECT_FALSE(s.second());
  EXPECT_TRUE(s.secondFor(kBytes, false));
  s.record(0.5);
  EXPECT_TRUE(s.second());
}

// Each size warms up in a try: a try begun at one size goes on at the next, whose first calls
// of the option tried are warm-ups, however fast, and are not compared; a size already warm is
// compared at once.
TEST(TimedChoice, EachSizeWarmsUpInATry) {
  TimedChoice s(TimedChoice::Mode::kAuto, "band", "staged", "single copy", {2, 2, true});
  // 8M: not timed, two timed calls staged, then the two warm-ups of a try.
  EXPECT_EQ(run(s, 3 + 2, 1.0, 2.0), 2);
  // 512M: not timed, then two calls staged, as it has no staged times yet to compare with.
  EXPECT_EQ(runAt(s, kBig, 3, 100.0, 1.0), 0);
  for (int warmUp = 0; warmUp < 2; ++warmUp) {
    EXPECT_EQ(runAt(s, kBig, 1, 100.0, 1.0), 1);
    EXPECT_FALSE(s.second());
  }
  EXPECT_TRUE(s.secondFor(kBytes, false));
  s.record(0.5);
  EXPECT_TRUE(s.second());
}

// A size that comes less often than another begins a try once, as every size does, and then
// waits for the schedule like the rest, though its own calls were never compared.
TEST(TimedChoice, ASeldomSizeWaitsForTheSchedule) {
  TimedChoice s(TimedChoice::Mode::kAuto, "band", "staged", "single copy", {2, 2, true});
  const size_t sizes[] = {size_t{1} << 20, size_t{4} << 20, size_t{4} << 20};
  int seconds = 0;
  for (int i = 0; i < 3 * 100; ++i) {
    const size_t bytes = sizes[i % 3];
    const bool second = s.secondFor(bytes, false);
    seconds += second ? 1 : 0;
    s.record((second ? 1.5e-3 : 1e-3) * static_cast<double>(bytes >> 20));
  }
  // Each size begins one try (at timed calls 4 and 11), and each that loses doubles the wait, so
  // the next two begin at 80 and 213: 4 tries of at most 2 warm-ups of each size and 2 compared
  // calls.
  EXPECT_LE(seconds, 4 * 6);
  EXPECT_FALSE(s.second());
}

// Sizes that take turns, as a model's layers do, are tried together: each call of the try takes
// single copy, each size warms up, and the faster way takes over.
TEST(TimedChoice, SizesThatTakeTurnsAreTriedTogether) {
  TimedChoice s(TimedChoice::Mode::kAuto, "band", "staged", "single copy", {2, 2, true});
  const size_t sizes[] = {size_t{1} << 20, size_t{3} << 20};
  // Single copy is half as fast as staging for the first two calls of a size after staged
  // ones, and twice as fast after that.
  int runOfSecond[2] = {0, 0};
  auto call = [&](int which) {
    const bool second = s.secondFor(sizes[which], false);
    runOfSecond[which] = second ? runOfSecond[which] + 1 : 0;
    const double staged = 1e-3 * static_cast<double>(sizes[which] >> 20);
    s.record(second ? (runOfSecond[which] <= 2 ? 2.0 : 0.5) * staged : staged);
    return second;
  };
  auto calls = [&](int n) {
    int seconds = 0;
    for (int i = 0; i < n; ++i)
      seconds += call(i % 2) ? 1 : 0;
    return seconds;
  };
  // Each size: not timed, two timed calls staged, then the try's two warm-ups each; the first
  // size's compared call wins, and the second's next call goes single copy.
  EXPECT_EQ(calls(2 * 6), 2 + 2 + 2);
  EXPECT_TRUE(s.second());
  // The second size, not yet compared, tries staging, with the first: two warm-ups each and a
  // compared call each, which lose.
  EXPECT_EQ(calls(2 * 10), 20 - 6);
  EXPECT_TRUE(s.second());
  EXPECT_EQ(calls(2 * 5), 10);
}

// Tries that lose come ever more seldom: after each, the wait for the next doubles, up to
// kMaxExplorePeriod timed calls. One that wins resets it.
TEST(TimedChoice, LosingTriesBackOff) {
  TimedChoice s(TimedChoice::Mode::kAuto, "band", "staged", "single copy", {2, 2, true});
  // Tries of 4 calls begin at timed calls 3, 6 + 32 = 38 (the wait counts from a try's
  // end), 41 + 64, 108 + 128 and 239 + 256.
  EXPECT_EQ(run(s, 1 + 494, 1.0, 1.5), 16);
  EXPECT_EQ(run(s, 1, 1.0, 1.5), 1);
  EXPECT_EQ(run(s, 3 + 255, 1.0, 1.5), 3);  // the fifth try's end, then the wait at its longest
  EXPECT_EQ(run(s, 4, 1.0, 1.5), 4);
  // Single copy becomes the faster: it wins the next try and stays, and staged is tried again
  // kExplorePeriod timed calls later, no longer kMaxExplorePeriod.
  EXPECT_EQ(run(s, 255, 1.0, 0.5), 0);
  EXPECT_EQ(run(s, 3, 1.0, 0.5), 3);  // two warm-ups, then the call that wins
  EXPECT_TRUE(s.second());
  EXPECT_EQ(run(s, TimedChoice::kExplorePeriod - 1, 1.0, 0.5), TimedChoice::kExplorePeriod - 1);
  EXPECT_EQ(run(s, 4, 1.0, 0.5), 0);
}

// A periodic try that comes due during a size's first try is dropped: the wait for the next
// one counts from the end of that try, as after any other.
TEST(TimedChoice, ATryDueDuringAnotherIsDropped) {
  TimedChoice s(TimedChoice::Mode::kAuto, "band", "staged", "single copy", {2, 2, true});
  // 8M: the first try at timed calls 3-6, after which the next is due at 6 + 32 = 38.
  EXPECT_EQ(run(s, 1 + 33, 1.0, 1.5), 4);
  // 512M: not timed, timed calls 34 and 35 staged, then its first try at 36-39, in which the
  // periodic one comes due.
  EXPECT_EQ(runAt(s, kBig, 1 + 2 + 4, 1.0, 1.5), 4);
  // The next try begins at 39 + 64, and not at once.
  EXPECT_EQ(runAt(s, kBig, 63, 1.0, 1.5), 0);
  EXPECT_EQ(runAt(s, kBig, 4, 1.0, 1.5), 4);
  EXPECT_FALSE(s.second());
}

TEST(TimedChoice, ParsesModes) {
  EXPECT_EQ(TimedChoice::parse("auto", "cached", "streamed"), TimedChoice::Mode::kAuto);
  EXPECT_EQ(TimedChoice::parse("cached", "cached", "streamed"), TimedChoice::Mode::kFirst);
  EXPECT_EQ(TimedChoice::parse("streamed", "cached", "streamed"), TimedChoice::Mode::kSecond);
  EXPECT_FALSE(TimedChoice::parse("nt", "cached", "streamed").has_value());
}

}  // namespace
}  // namespace weft
