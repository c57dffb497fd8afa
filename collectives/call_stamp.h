// Call stamps for collectives (transports/channel.h's CallStamp): what every rank's call must
// agree on, carried in the header of each of the call's messages and checked by the receiver,
// and the error that names both calls when they differ.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "collectives/schedule.h"
#include "src/base/status.h"
#include "transports/channel.h"
#include "weft/weft.h"

namespace weft {

// A collective call as the ranks must all make it. Fields a collective ignores are left out of
// its stamp: the operator of a non-reduction, the root of a collective without one, the count
// of an all-to-allv (whose counts differ by rank; each message's length is still checked).
struct CallSpec {
  CollKind kind = CollKind::kBarrier;
  size_t count = 0;
  weftDataType_t type = weftInt8;
  weftRedOp_t op = weftSum;
  int root = 0;
};

// The stamp of the communicator's `sequence`-th collective (counted alike on every rank).
CallStamp stampOf(const CallSpec& call, uint64_t sequence);

// "all_reduce #12 (1000 x float32 sum)", "broadcast #3 (8 x int32 from rank 1)"; for the stamp
// of a point-to-point message (flags), "send".
std::string describeCall(const CallStamp& stamp, uint16_t flags);
// The same without the number, and with the fields the collective ignores left out:
// "all_reduce (1000 x float32 sum)". Ranks whose calls must agree have equal descriptions.
std::string describeCallSpec(const CallSpec& call);

// The error of a receive from `peer` whose message belongs to another call than the one this
// rank (`rank`) made: weftInvalidUsage, naming both calls and what differs.
Status callMismatch(int peer, const MessageHeader& theirs, int rank, const CallStamp& ours,
                    uint16_t ourFlags);

// Rooted collectives leave ranks without a message to receive (a broadcast's root, a reduce's
// leaves), whose calls no peer would check. For those, each rank also signals the next rank of
// the ring `order` (rank order where empty) and waits for the previous one's signal, so that
// every rank receives a stamped message in every call.
void addCallCheck(const CollArgs& args, const std::vector<int>& order, Schedule* schedule);

// The shared-memory paths a collective may take (collectives/direct.h, staged.h); ranks must
// take the same one, which they do where their WEFT_DIRECT_BYTES and WEFT_SHM_SINGLE_COPY*
// agree.
enum class SlotPath : uint8_t { kDirect, kStaged, kStagedOrSingleCopy };

// A call in the 64 bits a shared-memory slot has for it (collectives/slot_area.h's signature):
// kind, type, operator, root below 2^18, the count folded to 32 bits, and the path. Two calls
// that differ only in counts 2^32 apart, or roots 2^18 apart, look alike.
uint64_t slotSignature(const CallSpec& call, SlotPath path);

// The error of a rank that found peer `peer`'s slot posted with another signature than its own.
Status slotMismatch(int peer, uint64_t theirs, int rank, uint64_t ours);

}  // namespace weft
