// Trace dumps: a communicator's flight recorder (src/comm/flight_recorder.h) written as JSON
// to the file WEFT_TRACE_DUMP names, on the communicator's first error (a timeout included) and,
// for every live communicator of the process, on SIGUSR1. weft-trace reads them.
#pragma once

#include <string>

#include "src/base/status.h"

namespace weft {

class Communicator;

// The file: WEFT_TRACE_DUMP with %h and %p expanded, then the communicator's tag in hex and the
// rank: "<prefix>0123456789abcdef.r2.json". "" where WEFT_TRACE_DUMP is unset.
std::string traceDumpPath(const Communicator& comm);
// The dump: who and why (reason: "error", "signal"; error, where not ok, is the
// communicator's error), then the recorded calls, oldest first.
std::string traceJson(Communicator& comm, const std::string& reason, const Status& error);
// Writes traceJson to traceDumpPath; returns the path, or "" where WEFT_TRACE_DUMP is unset or
// the file could not be written (a warning says why).
std::string dumpTrace(Communicator& comm, const std::string& reason, const Status& error);
// Where WEFT_TRACE_DUMP is set and SIGUSR1 has no handler yet: makes SIGUSR1 dump every live
// communicator of the process, which keeps running. Once per process; later calls do nothing.
void installTraceSignal();

}  // namespace weft
