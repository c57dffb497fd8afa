#include "collectives/call_stamp.h"

#include <algorithm>

#include "collectives/datatype.h"
#include "src/base/text.h"

namespace weft {
namespace {

// CallStamp::what: kind in bits 0-7, type 8-15, operator 16-23, root 32-62, and bit 63 set, so
// that no collective's stamp is a point-to-point message's (all zero).
constexpr uint64_t kCollectiveBit = 1ull << 63;

bool rooted(CollKind kind) {
  return kind == CollKind::kBroadcast || kind == CollKind::kReduce;
}

struct Unpacked {
  bool collective = false;
  CallSpec call;
};

Unpacked unpack(const CallStamp& s) {
  Unpacked u;
  u.collective = (s.what & kCollectiveBit) != 0;
  u.call.kind = static_cast<CollKind>(s.what & 0xff);
  u.call.type = static_cast<weftDataType_t>((s.what >> 8) & 0xff);
  u.call.op = static_cast<weftRedOp_t>((s.what >> 16) & 0xff);
  u.call.root = static_cast<int>((s.what >> 32) & 0x7fffffff);
  u.call.count = static_cast<size_t>(s.count);
  return u;
}

bool knownKind(CollKind kind) {
  return static_cast<int>(kind) < kNumCollKinds;
}

// The fields a collective ignores, cleared: what ranks must agree on.
CallSpec normalized(const CallSpec& call) {
  CallSpec c = call;
  if (!isReduction(c.kind)) c.op = weftSum;
  if (!rooted(c.kind)) c.root = 0;
  if (c.kind == CollKind::kAllToAllv || c.kind == CollKind::kBarrier) c.count = 0;
  if (c.kind == CollKind::kBarrier) c.type = weftInt8;
  return c;
}

// "all_reduce (1000 x float32 sum)", the call number left to the caller.
std::string describeSpec(const CallSpec& c, const std::string& number) {
  if (!knownKind(c.kind)) return "an unknown call";
  if (c.kind == CollKind::kBarrier) return "barrier" + number;
  const char* type = validType(c.type) ? typeName(c.type) : "?";
  std::string what =
      c.kind == CollKind::kAllToAllv
          ? strprintf("%s%s (%s", collName(c.kind), number.c_str(), type)
          : strprintf("%s%s (%zu x %s", collName(c.kind), number.c_str(), c.count, type);
  if (isReduction(c.kind)) what += strprintf(" %s", validOp(c.op) ? opName(c.op) : "?");
  if (rooted(c.kind)) what += strprintf(", root %d", c.root);
  return what + ")";
}

// " (they differ in type, count)", or "" where nothing listed differs.
std::string differences(const CallSpec& a, const CallSpec& b, bool sequences, bool paths) {
  std::string list;
  auto add = [&list](bool differs, const char* name) {
    if (!differs) return;
    list += list.empty() ? name : std::string(", ") + name;
  };
  add(a.kind != b.kind, "collective");
  add(a.type != b.type, "type");
  add(a.op != b.op, "operator");
  add(a.root != b.root, "root");
  add(a.count != b.count, "count");
  add(sequences, "call number");
  add(paths, "path: WEFT_DIRECT_BYTES or WEFT_SHM_SINGLE_COPY* differ between the ranks");
  return list.empty() ? "" : " (they differ in " + list + ")";
}

Status mismatchError(int peer, const std::string& theirs, int rank, const std::string& ours,
                     const std::string& differ) {
  return errorf(weftInvalidUsage,
                "rank %d called %s where rank %d called %s%s: every rank must make the same "
                "calls in the same order",
                peer, theirs.c_str(), rank, ours.c_str(), differ.c_str());
}

// slotSignature's layout: count bits 0-31, kind 32-35, type 36-39, operator 40-43, path 44-45,
// root 46-63.
constexpr uint64_t kRootBits = 18;
static_assert(kNumCollKinds <= 16 && weftNumTypes <= 16 && weftNumOps <= 16);

CallSpec unpackSlot(uint64_t s, SlotPath* path) {
  CallSpec c;
  c.count = static_cast<size_t>(s & 0xffffffffu);
  c.kind = static_cast<CollKind>((s >> 32) & 0xf);
  c.type = static_cast<weftDataType_t>((s >> 36) & 0xf);
  c.op = static_cast<weftRedOp_t>((s >> 40) & 0xf);
  *path = static_cast<SlotPath>((s >> 44) & 0x3);
  c.root = static_cast<int>(s >> 46);
  return c;
}

}  // namespace

CallStamp stampOf(const CallSpec& call, uint64_t sequence) {
  const CallSpec c = normalized(call);
  CallStamp s;
  s.what = kCollectiveBit | static_cast<uint64_t>(c.kind) | static_cast<uint64_t>(c.type) << 8 |
           static_cast<uint64_t>(c.op) << 16 | static_cast<uint64_t>(c.root & 0x7fffffff) << 32;
  s.count = c.count;
  s.sequence = sequence;
  return s;
}

std::string describeCall(const CallStamp& stamp, uint16_t flags) {
  if ((flags & kPointToPointMessage) != 0) return "send";
  const Unpacked u = unpack(stamp);
  if (!u.collective) return "an unknown call";
  return describeSpec(u.call, strprintf(" #%llu", static_cast<unsigned long long>(stamp.sequence)));
}

std::string describeCallSpec(const CallSpec& call) {
  return describeSpec(normalized(call), "");
}

Status callMismatch(int peer, const MessageHeader& theirs, int rank, const CallStamp& ours,
                    uint16_t ourFlags) {
  const bool bothCollective = ((theirs.flags | ourFlags) & kPointToPointMessage) == 0;
  const std::string differ = bothCollective
                                 ? differences(unpack(theirs.call).call, unpack(ours).call,
                                               theirs.call.sequence != ours.sequence, false)
                                 : "";
  const std::string mine =
      (ourFlags & kPointToPointMessage) != 0 ? "recv" : describeCall(ours, ourFlags);
  return mismatchError(peer, describeCall(theirs.call, theirs.flags), rank, mine, differ);
}

void addCallCheck(const CollArgs& args, const std::vector<int>& order, Schedule* schedule) {
  if (!rooted(args.kind) || args.nranks < 2) return;
  const int n = args.nranks;
  int position = args.rank;
  if (!order.empty())
    position = static_cast<int>(std::find(order.begin(), order.end(), args.rank) - order.begin());
  auto at = [&](int p) { return order.empty() ? p : order[static_cast<size_t>(p)]; };
  schedule->messageSignal(at((position + 1) % n));
  schedule->messageWait(at((position + n - 1) % n));
}

uint64_t slotSignature(const CallSpec& call, SlotPath path) {
  const CallSpec c = normalized(call);
  const uint64_t count = static_cast<uint64_t>(c.count);
  return ((count ^ (count >> 32)) & 0xffffffffu) | static_cast<uint64_t>(c.kind) << 32 |
         static_cast<uint64_t>(c.type) << 36 | static_cast<uint64_t>(c.op) << 40 |
         static_cast<uint64_t>(path) << 44 |
         static_cast<uint64_t>(c.root & ((1 << kRootBits) - 1)) << 46;
}

Status slotMismatch(int peer, uint64_t theirs, int rank, uint64_t ours) {
  SlotPath theirPath, ourPath;
  const CallSpec a = unpackSlot(theirs, &theirPath);
  const CallSpec b = unpackSlot(ours, &ourPath);
  return mismatchError(peer, describeSpec(a, ""), rank, describeSpec(b, ""),
                       differences(a, b, false, theirPath != ourPath));
}

}  // namespace weft
