#include "src/comm/traffic_stats.h"

namespace weft {
namespace {

constexpr auto kRelaxed = std::memory_order_relaxed;

// Only the filing thread writes `counter`: a load and a store, no locked instruction.
void addTo(std::atomic<uint64_t>& counter, uint64_t n) {
  counter.store(counter.load(kRelaxed) + n, kRelaxed);
}

// A counter since the last reset. The baseline first: a reset stored it after reading a counter
// no larger than the one read next, so the difference never goes below zero.
uint64_t since(const std::atomic<uint64_t>& counter, const std::atomic<uint64_t>& baseline) {
  const uint64_t base = baseline.load(std::memory_order_acquire);
  return counter.load(kRelaxed) - base;
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
    s.calls = since(c.calls, b.calls);
    s.bytes = since(c.bytes, b.bytes);
    s.bytesSent = since(c.sent, b.sent);
    s.bytesReceived = since(c.received, b.received);
    out->total.calls += s.calls;
    out->total.bytes += s.bytes;
    out->total.bytesSent += s.bytesSent;
    out->total.bytesReceived += s.bytesReceived;
  }
}

// Each baseline is stored after its counter is read (release), for since().
void TrafficStats::reset() {
  for (size_t k = 0; k < kinds_.size(); ++k) {
    const Counters& c = kinds_[k];
    Counters& b = baseline_[k];
    b.calls.store(c.calls.load(kRelaxed), std::memory_order_release);
    b.bytes.store(c.bytes.load(kRelaxed), std::memory_order_release);
    b.sent.store(c.sent.load(kRelaxed), std::memory_order_release);
    b.received.store(c.received.load(kRelaxed), std::memory_order_release);
  }
}

}  // namespace weft
