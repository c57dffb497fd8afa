// One rank's trace dump (src/enqueue/trace_dump.h writes them), as weft-trace reads it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace weft::trace {

struct TracedCall {
  uint64_t id = 0;
  std::string kind;         // "all_reduce", ..., "send", "recv"
  std::string call;         // "all_reduce (100 x float32 sum)": equal on ranks whose calls agree
  int64_t collective = -1;  // the call's number among the collectives; -1 for send and recv
  std::string state;        // "enqueued", "started", "finished", "failed"
  std::string how;          // "ring", "direct", ...; "" before it started
  std::string result;       // a failed call's error name
  double enqueuedUs = 0;
  double startedUs = 0;  // 0: not started
  double endedUs = 0;    // 0: not ended
  bool ran() const { return state != "enqueued"; }
};

struct RankDump {
  std::string file;
  std::string comm;  // the communicator's tag, shared by its ranks
  std::string name;
  int rank = 0;
  int nranks = 0;
  std::string host;
  int64_t pid = 0;
  std::string reason;  // "error" or "signal"
  std::string error;   // the communicator's error, if any
  double timeUs = 0;
  std::vector<TracedCall> calls;  // oldest first
};

// Parses one dump; false with *error saying what is wrong with it.
bool parseDump(const std::string& text, const std::string& file, RankDump* out, std::string* error);

}  // namespace weft::trace
