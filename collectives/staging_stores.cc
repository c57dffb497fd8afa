#include "collectives/staging_stores.h"

#include <algorithm>
#include <bit>

#include "src/base/log.h"

namespace weft {

std::optional<StagingStores::Mode> StagingStores::parse(const std::string& text) {
  if (text == "auto") return Mode::kAuto;
  if (text == "cached") return Mode::kCached;
  if (text == "streamed") return Mode::kStreamed;
  return std::nullopt;
}

int StagingStores::classOf(size_t bytes, bool inPlace) {
  if (bytes < kMinBytes) return -1;
  const int c = std::min(static_cast<int>(std::bit_width(bytes / kMinBytes)) - 1, kClasses - 1);
  return 2 * c + (inPlace ? 1 : 0);
}

double StagingStores::Times::best() const {
  double b = latest[0];
  for (int i = 1; i < std::min(count, kWindow); ++i)
    b = std::min(b, latest[i]);
  return b;
}

bool StagingStores::streamFor(size_t bytes, bool inPlace) {
  pending_ = -1;
  if (mode_ != Mode::kAuto) return mode_ == Mode::kStreamed;
  const int c = classOf(bytes, inPlace);
  if (c < 0) return streamed_;
  SizeClass& k = classes_[c];
  if (!k.seen) {
    k.seen = true;
    return streamed_;
  }
  if (++timedCalls_ % kExplorePeriod == 0) exploreDue_ = true;
  // Only where the kind in use has times to compare with.
  pendingExplores_ = (exploreDue_ || !k.explored) && k.times[streamed_ ? 1 : 0].count >= 2;
  if (pendingExplores_) {
    exploreDue_ = false;
    k.explored = true;
  }
  pending_ = c;
  pendingBytes_ = bytes;
  pendingStreamed_ = pendingExplores_ != streamed_;
  return pendingStreamed_;
}

void StagingStores::record(double seconds) {
  if (pending_ < 0 || seconds <= 0) return;
  SizeClass& k = classes_[pending_];
  const double perByte = seconds / static_cast<double>(pendingBytes_);
  Times& mine = k.times[pendingStreamed_ ? 1 : 0];
  if (!pendingExplores_) {
    mine.add(perByte);
  } else {
    const double inUse = k.times[streamed_ ? 1 : 0].best();
    if (perByte < kSwitchRatio * inUse) {
      streamed_ = pendingStreamed_;
      // Times from the last time this kind was in use are stale: the cores may have moved since.
      for (SizeClass& other : classes_)
        other.times[streamed_ ? 1 : 0] = Times();
      mine.add(perByte);
      WEFT_INFO(kColl,
                "staged reductions stage with %s stores now: %.3f ms per MiB against %.3f at %zuK",
                streamed_ ? "non-temporal" : "ordinary", perByte * 1e3 * (1 << 20),
                inUse * 1e3 * (1 << 20), (kMinBytes << (pending_ / 2)) >> 10);
    }
  }
  pending_ = -1;
}

}  // namespace weft
