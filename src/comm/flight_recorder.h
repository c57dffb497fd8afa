// FlightRecorder: the last calls of one communicator, what they were and how far each got,
// kept always so that a hang or an error can be explained afterwards (WEFT_TRACE_DUMP,
// weft-trace). Recording costs a coarse clock read and a few relaxed stores per event; a thread may
// take a snapshot at any time, for instance while the recording thread is stuck in a call.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace weft {

enum class CallState : uint8_t { kEnqueued, kStarted, kFinished, kFailed };
const char* callStateName(CallState state);  // "enqueued", "started", "finished", "failed"

// What a call is, in words the recorder keeps but does not interpret (src/enqueue/record.h
// writes and reads them).
struct RecordedCall {
  uint64_t what = 0;
  uint64_t count = 0;
  // The call's number among the communicator's collectives; -1 for a send or receive.
  int64_t collective = -1;
};

struct CallRecord {
  uint64_t id = 0;  // the call's number among the calls recorded, from 1
  RecordedCall call;
  CallState state = CallState::kEnqueued;
  uint64_t how = 0;  // how it ran, from its start (src/enqueue/record.h)
  int result = 0;    // its weftResult_t once failed
  // Wall-clock times in nanoseconds since the epoch, to a scheduler tick (the coarse clock);
  // 0 where the call has not got there.
  int64_t enqueuedNs = 0;
  int64_t startedNs = 0;
  int64_t endedNs = 0;
};

class FlightRecorder {
 public:
  // Keeps the last `capacity` calls; 0 records nothing.
  explicit FlightRecorder(size_t capacity);

  // A new record; returns its id (0 when recording is off). Collectives are numbered here, in
  // the order they are added: the order the communicator runs them.
  uint64_t add(RecordedCall call);
  // State changes of record `id`; ignored where it was overwritten meanwhile.
  void start(uint64_t id, uint64_t how);
  void finish(uint64_t id);
  void fail(uint64_t id, int result);

  // The records still kept, oldest first. A record being rewritten while this runs is left out.
  std::vector<CallRecord> snapshot() const;

 private:
  struct Slot {
    std::atomic<uint64_t> id{0};  // 0: empty or being rewritten
    std::atomic<uint64_t> what{0};
    std::atomic<uint64_t> count{0};
    std::atomic<int64_t> collective{-1};
    std::atomic<uint64_t> how{0};
    std::atomic<uint32_t> state{0};  // CallState, and the result above bit 8
    std::atomic<int64_t> enqueuedNs{0};
    std::atomic<int64_t> startedNs{0};
    std::atomic<int64_t> endedNs{0};
  };
  Slot* slotOf(uint64_t id);
  void end(uint64_t id, CallState state, int result);

  const size_t capacity_;
  std::unique_ptr<Slot[]> slots_;
  std::atomic<uint64_t> nextId_{1};
  std::atomic<int64_t> nextCollective_{0};
};

}  // namespace weft
