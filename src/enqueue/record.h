// Recording: ops in their communicator's flight recorder (src/comm/flight_recorder.h), as they
// are enqueued, start, finish or fail; and what a record says, in words, for dumps.
#pragma once

#include <string>

#include "src/base/status.h"
#include "src/comm/flight_recorder.h"
#include "src/enqueue/op.h"
#include "src/enqueue/plan.h"

namespace weft {

// Adds the op to its communicator's recorder; its record's id goes into op.record.
void recordEnqueued(Op& op);
void recordStarted(const Op& op, const PhaseLabel& label);
void recordFinished(const Op& op);
void recordFailed(const Op& op, const Status& status);

// A record's call: "all_reduce (100 x float32 sum)", "send to rank 2 (8 x int32)",
// "recv from any rank (8 x int32)".
std::string describeRecordedCall(const RecordedCall& call);
// Its kind: a collective's name ("all_reduce"), "send" or "recv".
std::string recordedCallKind(const RecordedCall& call);
// How a started record ran (PhaseLabel::how()); "" before it started.
std::string describeRecordedHow(uint64_t how);

}  // namespace weft
