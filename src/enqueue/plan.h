// Planning: turns ops into phases the runner drives. The cost model picks each collective's
// algorithm; the communicator's executor cache keeps the analysed schedule for the next call
// with the same shape. A group's sends and receives on one communicator become one phase so
// they progress together.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collectives/algorithms.h"
#include "collectives/executor.h"
#include "collectives/placement.h"
#include "collectives/progressable.h"
#include "collectives/staged.h"
#include "src/base/status.h"
#include "src/enqueue/op.h"

namespace weft {

class Communicator;

// What a phase is, for log lines and error messages; formatted only when one is written.
struct PhaseLabel {
  bool pointToPoint = false;
  CollKind kind = CollKind::kAllReduce;
  size_t count = 0;  // elements, or calls in a send/recv group
  weftDataType_t type = weftFloat32;
  weftRedOp_t op = weftSum;
  bool reduces = false;
  // How it runs: a schedule of the chosen algorithm over the links, straight through shared
  // slots (collectives/direct.h), or chunk by chunk through staging areas
  // (collectives/staged.h), or, in the single-copy band, either that or single copy
  // (collectives/single_copy.h), as the ranks choose at run time.
  enum class Path { kAlgorithm, kDirect, kStaged, kStagedOrSingleCopy };
  Path path = Path::kAlgorithm;
  bool streamed = false;  // a staged output copied out past the cache
  bool tiered = false;    // in tiers across hosts (collectives/placement.h)
  TierAlgos tiers;
  Algo algo = Algo::kRing;
  // The collective's number (Communicator::nextCollective), or the send/recv group's.
  uint64_t sequence = 0;

  // "all_reduce #12 (4096 x float32 sum, ring)", "... staged, streamed)" or
  // "send/recv group #13 (4 calls)".
  std::string describe() const;
  // How it runs: "ring", "direct", "staged, streamed", "tiered tree/ring/tree", "send/recv".
  std::string how() const;
  // The fields how() reads, in one word (for the flight recorder), and back; 0 is no label.
  uint64_t packHow() const;
  static PhaseLabel unpackHow(uint64_t word);
};

struct Phase {
  Progressable* runnable = nullptr;     // a cached or owned executor, or the direct operation
  std::unique_ptr<Progressable> owned;  // for phases that are not cached
  // The staged operation, which may go mapped or single copy instead.
  const StagedOp* staged = nullptr;
  PhaseLabel label;
  // An average is a sum until this divides the result.
  void* averageBuffer = nullptr;
  size_t averageCount = 0;
  int averageDivisor = 1;
  weftDataType_t type = weftFloat32;

  void finish() const;
};

// An in-place all-to-all (both buffers the same) runs out of place, from a copy of its input in
// the communicator's stage: every path reads blocks of the send buffer while the receive buffer
// fills. Returns that out-of-place call, kept in *staged, or op itself for any other call. Only
// for the operation that has its communicator's turn, as the stage is the communicator's.
const Op& stageInPlace(Communicator& comm, const Op& op, Op* staged);
Status planCollective(Communicator& comm, const Op& op, Phase* out);
// planCollective's first choice, which the runner's shortcut also takes: starts the
// communicator's direct operation for `op` when `op` goes direct (it fits, and WEFT_ALGO
// allows it), else returns false.
bool startDirect(Communicator& comm, const Op& op);
// The COLL log's INFO line for a call that took a shared-memory path (label.path), once per
// shape of call: why, and what it was preferred to (the schedules with their predicted times).
void logPath(Communicator& comm, const Op& op, const PhaseLabel& label);
// A collective's label, its path aside.
PhaseLabel collectiveLabel(const Op& op, uint64_t sequence);
Status planPointToPoint(Communicator& comm, const std::vector<Op>& ops, Phase* out);

}  // namespace weft
