#include "src/comm/flight_recorder.h"

#include <time.h>

namespace weft {
namespace {

// The coarse real-time clock: its resolution is a scheduler tick (a few milliseconds), plenty
// to tell which calls hang and since when, and a read costs a tenth of the precise clock's
// (3 ns against 23 on the development VM, three times a call).
int64_t nowNs() {
  struct timespec ts = {};
  clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

constexpr auto kRelaxed = std::memory_order_relaxed;

}  // namespace

const char* callStateName(CallState state) {
  switch (state) {
    case CallState::kEnqueued:
      return "enqueued";
    case CallState::kStarted:
      return "started";
    case CallState::kFinished:
      return "finished";
    case CallState::kFailed:
      return "failed";
  }
  return "?";
}

FlightRecorder::FlightRecorder(size_t capacity)
    : capacity_(capacity), slots_(capacity > 0 ? new Slot[capacity] : nullptr) {}

FlightRecorder::Slot* FlightRecorder::slotOf(uint64_t id) {
  if (id == 0 || capacity_ == 0) return nullptr;
  Slot& s = slots_[id % capacity_];
  return s.id.load(std::memory_order_acquire) == id ? &s : nullptr;
}

uint64_t FlightRecorder::add(RecordedCall call) {
  if (capacity_ == 0) return 0;
  if (call.collective >= 0) call.collective = nextCollective_.fetch_add(1, kRelaxed);
  const uint64_t id = nextId_.fetch_add(1, kRelaxed);
  Slot& s = slots_[id % capacity_];
  s.id.store(0, kRelaxed);
  std::atomic_thread_fence(std::memory_order_release);
  s.what.store(call.what, kRelaxed);
  s.count.store(call.count, kRelaxed);
  s.collective.store(call.collective, kRelaxed);
  s.how.store(0, kRelaxed);
  s.state.store(static_cast<uint32_t>(CallState::kEnqueued), kRelaxed);
  s.enqueuedNs.store(nowNs(), kRelaxed);
  s.startedNs.store(0, kRelaxed);
  s.endedNs.store(0, kRelaxed);
  s.id.store(id, std::memory_order_release);
  return id;
}

void FlightRecorder::start(uint64_t id, uint64_t how) {
  Slot* s = slotOf(id);
  if (s == nullptr) return;
  s->how.store(how, kRelaxed);
  s->startedNs.store(nowNs(), kRelaxed);
  s->state.store(static_cast<uint32_t>(CallState::kStarted), std::memory_order_release);
}

void FlightRecorder::end(uint64_t id, CallState state, int result) {
  Slot* s = slotOf(id);
  if (s == nullptr) return;
  s->endedNs.store(nowNs(), kRelaxed);
  s->state.store(static_cast<uint32_t>(state) | static_cast<uint32_t>(result) << 8,
                 std::memory_order_release);
}

void FlightRecorder::finish(uint64_t id) {
  end(id, CallState::kFinished, 0);
}

void FlightRecorder::fail(uint64_t id, int result) {
  end(id, CallState::kFailed, result);
}

std::vector<CallRecord> FlightRecorder::snapshot() const {
  std::vector<CallRecord> out;
  const uint64_t next = nextId_.load(std::memory_order_acquire);
  const uint64_t first = next > capacity_ ? next - capacity_ : 1;
  for (uint64_t id = first; id < next; ++id) {
    const Slot& s = slots_[id % capacity_];
    if (s.id.load(std::memory_order_acquire) != id) continue;
    CallRecord r;
    r.id = id;
    const uint32_t state = s.state.load(std::memory_order_acquire);
    r.state = static_cast<CallState>(state & 0xff);
    r.result = static_cast<int>(state >> 8);
    r.call.what = s.what.load(kRelaxed);
    r.call.count = s.count.load(kRelaxed);
    r.call.collective = s.collective.load(kRelaxed);
    r.how = s.how.load(kRelaxed);
    r.enqueuedNs = s.enqueuedNs.load(kRelaxed);
    r.startedNs = s.startedNs.load(kRelaxed);
    r.endedNs = s.endedNs.load(kRelaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (s.id.load(kRelaxed) != id) continue;  // rewritten while read
    out.push_back(r);
  }
  return out;
}

}  // namespace weft
