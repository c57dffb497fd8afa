#include "src/comm/traffic_stats.h"

namespace weft {
namespace {

constexpr auto kRelaxed = std::memory_order_relaxed;

// Only the filing thread writes `counter`: a load and a store, no locked instruction.
void addTo(std::atomic<uint64_t>& counter, uint64_t n) {
  counter.store(counter.load(kRelaxed) + n, kRelaxed);
}

}  // namespace

void TrafficStats::file(weftStatsKind_t kind, uint64_t calls, uint64_t bytes, bool sent,
                        bool received) {
  Counters& c = kinds_[static_cast<size_t>(kind)];
  addTo(c.calls, calls);
  addTo(c.bytes, bytes);
  if (sent) {
    addTo(c.sent, current_.sent);
    current_.sent = 0;
  }
  if (received) {
    addTo(c.received, current_.received);
    current_.received = 0;
  }
}

void TrafficStats::read(weftCommStats_t* out) const {
  out->total = weftCallStats_t{};
  for (size_t k = 0; k < kinds_.size(); ++k) {
    const Counters& c = kinds_[k];
    const Counters& b = baseline_[k];
    weftCallStats_t& s = out->byKind[k];
    s.calls = c.calls.load(kRelaxed) - b.calls.load(kRelaxed);
    s.bytes = c.bytes.load(kRelaxed) - b.bytes.load(kRelaxed);
    s.bytesSent = c.sent.load(kRelaxed) - b.sent.load(kRelaxed);
    s.bytesReceived = c.received.load(kRelaxed) - b.received.load(kRelaxed);
    out->total.calls += s.calls;
    out->total.bytes += s.bytes;
    out->total.bytesSent += s.bytesSent;
    out->total.bytesReceived += s.bytesReceived;
  }
}

void TrafficStats::reset() {
  for (size_t k = 0; k < kinds_.size(); ++k) {
    const Counters& c = kinds_[k];
    Counters& b = baseline_[k];
    b.calls.store(c.calls.load(kRelaxed), kRelaxed);
    b.bytes.store(c.bytes.load(kRelaxed), kRelaxed);
    b.sent.store(c.sent.load(kRelaxed), kRelaxed);
    b.received.store(c.received.load(kRelaxed), kRelaxed);
  }
}

}  // namespace weft
