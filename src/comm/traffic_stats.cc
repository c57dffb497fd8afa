#include "src/comm/traffic_stats.h"

namespace weft {

void TrafficStats::file(weftStatsKind_t kind, uint64_t calls, uint64_t bytes, bool sent,
                        bool received) {
  Counters& c = kinds_[static_cast<size_t>(kind)];
  c.calls.fetch_add(calls, std::memory_order_relaxed);
  c.bytes.fetch_add(bytes, std::memory_order_relaxed);
  if (sent) {
    c.sent.fetch_add(current_.sent, std::memory_order_relaxed);
    current_.sent = 0;
  }
  if (received) {
    c.received.fetch_add(current_.received, std::memory_order_relaxed);
    current_.received = 0;
  }
}

void TrafficStats::read(weftCommStats_t* out) const {
  out->total = weftCallStats_t{};
  for (size_t k = 0; k < kinds_.size(); ++k) {
    const Counters& c = kinds_[k];
    weftCallStats_t& s = out->byKind[k];
    s.calls = c.calls.load(std::memory_order_relaxed);
    s.bytes = c.bytes.load(std::memory_order_relaxed);
    s.bytesSent = c.sent.load(std::memory_order_relaxed);
    s.bytesReceived = c.received.load(std::memory_order_relaxed);
    out->total.calls += s.calls;
    out->total.bytes += s.bytes;
    out->total.bytesSent += s.bytesSent;
    out->total.bytesReceived += s.bytesReceived;
  }
}

void TrafficStats::reset() {
  for (Counters& c : kinds_) {
    c.calls.store(0, std::memory_order_relaxed);
    c.bytes.store(0, std::memory_order_relaxed);
    c.sent.store(0, std::memory_order_relaxed);
    c.received.store(0, std::memory_order_relaxed);
  }
}

}  // namespace weft
