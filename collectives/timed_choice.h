// TimedChoice: picks the faster of two ways to run the same calls by timing the calls, where
// which one is faster depends on where the cores sit at the moment. It makes two choices:
//
// - Which stores staged collectives of 3 ranks and more stage their chunks with (2 ranks probe
//   the cores' distance instead, collectives/core_probe.h; collectives/staged.h): ordinary
//   ones, which leave a chunk in this core's cache for the peers to read from there, or
//   non-temporal ones, which send it to memory. Measured on a 2-core VM, 256K to 64M, 2 and 4
//   ranks: ordinary stores were 15-30% faster while the two vCPUs shared an L3 (a cache-line
//   round trip of 50-90 ns), and non-temporal ones 1.5-1.8x faster while they did not
//   (180-250 ns); the VM moved between the two within minutes. Each rank chooses for itself,
//   as the chunks hold the same bytes either way.
// - Under WEFT_SHM_SINGLE_COPY=auto (the default), whether the all-gathers and all-to-alls of
//   the single-copy band go staged or single copy (collectives/single_copy.h). Measured on the
//   same VM, 2-rank all_gather of 256K-1M per rank: staged 1.3-1.5x faster in one placement,
//   single copy about 4.5x faster in another. All ranks must agree, so one rank chooses and
//   posts its choice.
//
// The first option is in use at first. Each call of kMinBytes or more is timed: the third timed
// call of each size class and every kExplorePeriod-th timed call try the other option (or begin
// a try of several calls, Trial), and compare its time per byte with the best of the option in
// use's last kWindow calls of the same size (by power of two) and placement (in-place calls ran
// up to 1.8x faster than others of the same size). A call is only ever slowed by what else
// runs, so the best of a few is the fair figure. The option in use is one for all sizes, since
// what moves it moves every size; ranks that call alike explore on the same calls, so each
// times the other option against peers that do the same.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace weft {

class TimedChoice {
 public:
  enum class Mode { kAuto, kFirst, kSecond };
  // Smaller calls are timed too coarsely by one call; they keep the option in use.
  static constexpr size_t kMinBytes = size_t{256} << 10;
  static constexpr uint64_t kExplorePeriod = 16;
  static constexpr int kWindow = 4;
  // The other option takes over only when a call with it was this much faster.
  static constexpr double kSwitchRatio = 0.85;
  // The longest wait between tries where tries back off (Trial::backsOff).
  static constexpr uint64_t kMaxExplorePeriod = 16 * kExplorePeriod;

  // How the option not in use is tried. During a try, every call of a size with times to
  // compare with takes it: each such size's first `warmups` calls in the try are not compared,
  // and the try ends after `compared` calls that are, of whatever sizes. So sizes that take turns
  // (the layers of a model) are tried together, each as warm as the option tried leaves it.
  // Warm-up calls are for an option whose first calls of a size after the other's pay for the
  // state that one left the buffers in. `backsOff`: each try that loses doubles the wait for the
  // next (up to kMaxExplorePeriod; a switch resets it), as a try of several calls costs more
  // where it loses.
  struct Trial {
    int compared = 1;  // at least 1
    int warmups = 0;
    bool backsOff = false;
  };

  // "auto", or the name of the first or the second option; empty optional otherwise.
  static std::optional<Mode> parse(const std::string& text, const std::string& first,
                                   const std::string& second);

  // `subject` and the options' names are for the log.
  TimedChoice(Mode mode, std::string subject, std::string first, std::string second, Trial trial)
      : mode_(mode),
        subject_(std::move(subject)),
        names_{std::move(first), std::move(second)},
        trial_(trial) {}
  TimedChoice(Mode mode, std::string subject, std::string first, std::string second)
      : TimedChoice(mode, std::move(subject), std::move(first), std::move(second), Trial()) {}
  TimedChoice() : TimedChoice(Mode::kAuto, "choice", "first", "second") {}

  // Whether the call about to start, with `bytes` on this rank and in place or not, takes the
  // second option. record() then gets its time.
  bool secondFor(size_t bytes, bool inPlace);
  // How long the call secondFor() last answered took, from start to finish.
  void record(double seconds);

  // The option in use: whether calls take the second one (those that do not explore).
  bool second() const { return mode_ == Mode::kAuto ? second_ : mode_ == Mode::kSecond; }
  // How many calls it has timed (in auto mode; a size class's first call is not timed).
  uint64_t timedCalls() const { return timedCalls_; }

 private:
  static constexpr int kClasses = 16;  // 256K .. 8G and up
  // The times per byte of an option's last kWindow calls of one size class.
  struct Times {
    std::array<double, kWindow> latest{};
    int next = 0;   // where the next time goes
    int count = 0;  // how many are held, up to kWindow
    void add(double perByte);
    double best() const;
  };
  struct SizeClass {
    bool seen = false;           // its first call is not timed: it faults the buffers' pages in
    bool explored = false;       // it has begun a try, or been compared in one
    int tryWarmups = 0;          // its warm-up calls in the try under way
    std::array<Times, 2> times;  // by option
  };
  static int classOf(size_t bytes, bool inPlace);

  void beginTry();
  void endTry(bool switched);

  Mode mode_;
  std::string subject_;
  std::array<std::string, 2> names_;
  Trial trial_;
  bool second_ = false;
  uint64_t timedCalls_ = 0;
  uint64_t period_ = kExplorePeriod;   // timed calls between tries
  uint64_t nextTry_ = kExplorePeriod;  // the timed call at which the next try is due
  bool exploreDue_ = false;
  int tryLeft_ = 0;                                // calls left to compare in the try under way
  std::array<SizeClass, 2 * kClasses> classes_{};  // by size, out of place then in place
  // The call being timed: its class (-1: none), size, the option it took, and whether it tried
  // the option not in use.
  int pending_ = -1;
  size_t pendingBytes_ = 0;
  bool pendingSecond_ = false;
  bool pendingExplores_ = false;
  bool pendingWarmup_ = false;  // a warm-up call of a try: not compared
};

}  // namespace weft
