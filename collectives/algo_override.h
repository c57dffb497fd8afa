// WEFT_ALGO: which algorithms the cost model may pick, and which shared-memory paths the planner
// may take (src/enqueue/plan.cc), per collective.
//
//   ""                               every algorithm and path
//   "ring" or "ring,tree"            only those; a collective that none of them implements
//                                    keeps every algorithm and path that implements it
//   "^tree"                          every algorithm and path but tree
//   "allreduce:tree;broadcast:ring"  per collective (the others keep every algorithm); an
//                                    entry without a collective sets the default for the rest
//   "direct" or "staged"             a path where it fits the call; a list that names paths
//                                    but no algorithm leaves the algorithms free for the calls
//                                    its paths do not fit
//
// Algorithms: ring, tree, rd, pairwise, dissemination. Paths (ranks that all share memory):
// direct (through the slots), staged (through the staging areas), mapped (in place, where every
// rank's buffers are weftMemAlloc memory) and singlecopy (all-gathers, broadcasts and
// all-to-alls reading the peers' inputs with process_vm_readv). Mapped and single copy are ways
// of a staged call that the ranks settle on once all have posted their buffers: "^staged" leaves
// all three out, "staged" alone only stages, and "mapped" or "singlecopy" start staged calls
// that go that way where they can and stage where they cannot (a rank's buffer on the heap under
// "mapped"), the one way every rank can go. "singlecopy" without "staged" takes every call of
// its kinds single copy, whatever the band's settings (which apply where both are allowed).
// Collectives: broadcast, reduce, allreduce, reducescatter, allgather, alltoall, alltoallv, barrier
// (underscores allowed: all_reduce). Names are case-insensitive.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "collectives/algorithms.h"
#include "collectives/schedule.h"
#include "src/base/status.h"

namespace weft {

enum class ShmPath : uint8_t { kDirect, kStaged, kMapped, kSingleCopy };
constexpr int kNumShmPaths = 4;
const char* shmPathName(ShmPath path);  // "direct", "staged", "mapped", "singlecopy"
bool shmPathSupports(ShmPath path, CollKind kind);

class AlgoOverride {
 public:
  AlgoOverride();  // allows every algorithm

  // Bad text gives weftInvalidArgument naming what is wrong; *out is unchanged then.
  static Status parse(const std::string& text, AlgoOverride* out);

  // Whether the cost model may pick `algo` for `kind`; false where algo does not implement kind.
  bool allows(CollKind kind, Algo algo) const;
  // Whether the planner may take `path` for `kind` where the path fits the call.
  bool allows(CollKind kind, ShmPath path) const;
  // Whether the planner may start a staged call (whichever way it then goes).
  bool allowsStagedCall(CollKind kind) const {
    return allows(kind, ShmPath::kStaged) || allows(kind, ShmPath::kMapped) ||
           allows(kind, ShmPath::kSingleCopy);
  }

 private:
  std::array<uint16_t, kNumCollKinds> allowed_{};  // bit per Algo, then per ShmPath
};

// Parses a collective name as WEFT_ALGO spells it ("allreduce", "all_reduce", ...).
std::optional<CollKind> parseCollName(std::string_view name);

}  // namespace weft
