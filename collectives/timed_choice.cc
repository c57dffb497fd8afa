#include "collectives/timed_choice.h"

#include <algorithm>
#include <bit>

#include "src/base/log.h"

namespace weft {

std::optional<TimedChoice::Mode> TimedChoice::parse(const std::string& text,
                                                    const std::string& first,
                                                    const std::string& second) {
  if (text == "auto") return Mode::kAuto;
  if (text == first) return Mode::kFirst;
  if (text == second) return Mode::kSecond;
  return std::nullopt;
}

int TimedChoice::classOf(size_t bytes, bool inPlace) {
  if (bytes < kMinBytes) return -1;
  const int c = std::min(static_cast<int>(std::bit_width(bytes / kMinBytes)) - 1, kClasses - 1);
  return 2 * c + (inPlace ? 1 : 0);
}

void TimedChoice::Times::add(double perByte) {
  latest[next] = perByte;
  next = (next + 1) % kWindow;
  count = std::min(count + 1, kWindow);
}

double TimedChoice::Times::best() const {
  double b = latest[0];
  for (int i = 1; i < count; ++i)
    b = std::min(b, latest[i]);
  return b;
}

bool TimedChoice::secondFor(size_t bytes, bool inPlace) {
  pending_ = -1;
  if (mode_ != Mode::kAuto) return mode_ == Mode::kSecond;
  const int c = classOf(bytes, inPlace);
  if (c < 0) return second_;
  SizeClass& k = classes_[c];
  if (!k.seen) {
    k.seen = true;
    return second_;
  }
  if (++timedCalls_ >= nextTry_) {
    exploreDue_ = true;
    nextTry_ = timedCalls_ + period_;
  }
  // Only where the option in use has times to compare with: a size without them keeps it, even
  // during a try, until it has them.
  const bool comparable = k.times[second_ ? 1 : 0].count >= 2;
  if (comparable && tryLeft_ == 0 && (exploreDue_ || !k.explored)) {
    beginTry();
    k.explored = true;
  }
  pendingExplores_ = comparable && tryLeft_ > 0;
  pendingWarmup_ = pendingExplores_ && k.tryWarmups < trial_.warmups;
  if (pendingWarmup_) {
    ++k.tryWarmups;
  } else if (pendingExplores_) {
    --tryLeft_;
    k.explored = true;
  }
  pending_ = c;
  pendingBytes_ = bytes;
  pendingSecond_ = pendingExplores_ != second_;
  return pendingSecond_;
}

void TimedChoice::record(double seconds) {
  if (pending_ < 0 || seconds <= 0) return;
  SizeClass& k = classes_[pending_];
  const double perByte = seconds / static_cast<double>(pendingBytes_);
  Times& mine = k.times[pendingSecond_ ? 1 : 0];
  if (!pendingExplores_) {
    mine.add(perByte);
  } else if (!pendingWarmup_) {
    const double inUse = k.times[second_ ? 1 : 0].best();
    if (perByte < kSwitchRatio * inUse) {
      second_ = pendingSecond_;
      // Times from the last time this option was in use are stale: the cores may have moved since.
      for (SizeClass& other : classes_)
        other.times[second_ ? 1 : 0] = Times();
      mine.add(perByte);
      WEFT_INFO(kColl, "%s: %s now, %.3f ms per MiB against %.3f with %s at %zuK", subject_.c_str(),
                names_[second_ ? 1 : 0].c_str(), perByte * 1e3 * (1 << 20), inUse * 1e3 * (1 << 20),
                names_[second_ ? 0 : 1].c_str(), (kMinBytes << (pending_ / 2)) >> 10);
      endTry(true);
    } else if (tryLeft_ == 0) {
      endTry(false);
    }
  }
  pending_ = -1;
}

void TimedChoice::beginTry() {
  exploreDue_ = false;
  tryLeft_ = trial_.compared;
  for (SizeClass& k : classes_)
    k.tryWarmups = 0;
}

void TimedChoice::endTry(bool switched) {
  tryLeft_ = 0;
  if (!trial_.backsOff) return;
  period_ = switched ? kExplorePeriod : std::min(2 * period_, kMaxExplorePeriod);
  nextTry_ = timedCalls_ + period_;
  // The wait begins anew here, so a try that came due during this one is dropped, not run next.
  exploreDue_ = false;
}

}  // namespace weft
