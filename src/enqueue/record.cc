#include "src/enqueue/record.h"

#include "collectives/call_stamp.h"
#include "collectives/datatype.h"
#include "src/comm/communicator.h"

namespace weft {
namespace {

// RecordedCall::what: the op kind in bits 0-7, the collective 8-15, type 16-23, operator
// 24-31, and the root or peer (kAnySource included) as a 32-bit integer above.
struct Unpacked {
  OpKind kind = OpKind::kCollective;
  CollKind coll = CollKind::kBarrier;
  weftDataType_t type = weftFloat32;
  weftRedOp_t redop = weftSum;
  int peerOrRoot = 0;
};

RecordedCall pack(const Op& op) {
  RecordedCall c;
  const bool collective = op.kind == OpKind::kCollective;
  const int peerOrRoot = collective ? op.args.root : op.peer;
  c.what = static_cast<uint64_t>(op.kind) | static_cast<uint64_t>(op.args.kind) << 8 |
           static_cast<uint64_t>(op.type) << 16 | static_cast<uint64_t>(op.redop) << 24 |
           static_cast<uint64_t>(static_cast<uint32_t>(peerOrRoot)) << 32;
  c.count = collective ? op.args.count : op.count;
  c.collective = collective ? 0 : -1;  // the recorder numbers collectives
  return c;
}

Unpacked unpack(const RecordedCall& c) {
  Unpacked u;
  u.kind = static_cast<OpKind>(c.what & 0xff);
  u.coll = static_cast<CollKind>((c.what >> 8) & 0xff);
  u.type = static_cast<weftDataType_t>((c.what >> 16) & 0xff);
  u.redop = static_cast<weftRedOp_t>((c.what >> 24) & 0xff);
  u.peerOrRoot = static_cast<int>(static_cast<uint32_t>(c.what >> 32));
  return u;
}

FlightRecorder& recorderOf(const Op& op) {
  return op.comm->recorder();
}

}  // namespace

void recordEnqueued(Op& op) {
  op.record = recorderOf(op).add(pack(op));
}

void recordStarted(const Op& op, const PhaseLabel& label) {
  recorderOf(op).start(op.record, label.packHow());
}

void recordFinished(const Op& op) {
  recorderOf(op).finish(op.record);
}

void recordFailed(const Op& op, const Status& status) {
  recorderOf(op).fail(op.record, status.code());
}

std::string describeRecordedCall(const RecordedCall& call) {
  const Unpacked u = unpack(call);
  const char* type = validType(u.type) ? typeName(u.type) : "?";
  if (u.kind == OpKind::kCollective) {
    if (static_cast<int>(u.coll) >= kNumCollKinds) return "an unknown call";
    return describeCallSpec(CallSpec{u.coll, call.count, u.type, u.redop, u.peerOrRoot});
  }
  const std::string peer =
      u.peerOrRoot == kAnySource ? "any rank" : strprintf("rank %d", u.peerOrRoot);
  return strprintf("%s %s (%llu x %s)", u.kind == OpKind::kSend ? "send to" : "recv from",
                   peer.c_str(), static_cast<unsigned long long>(call.count), type);
}

std::string recordedCallKind(const RecordedCall& call) {
  const Unpacked u = unpack(call);
  if (u.kind == OpKind::kSend) return "send";
  if (u.kind == OpKind::kRecv) return "recv";
  return static_cast<int>(u.coll) < kNumCollKinds ? collName(u.coll) : "?";
}

std::string describeRecordedHow(uint64_t how) {
  return how == 0 ? "" : PhaseLabel::unpackHow(how).how();
}

}  // namespace weft
