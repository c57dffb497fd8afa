// Which earlier steps of a schedule each step must wait for. A step reads up to two address
// ranges and writes one; it depends on the last writer of what it touches (read or write after
// write) and, when it writes, on the readers since (write after read). Earlier conflicts are
// reached through those by transitivity. Zero-count steps (signal/wait) touch no memory and act
// as fences: after every earlier step, before every later one. Message order per peer is not
// included: whoever runs the schedule keeps it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "collectives/schedule.h"

namespace weft {

struct Footprint {
  struct Range {
    uintptr_t begin = 0;
    uintptr_t end = 0;
  };
  Range read[2];
  Range write;
  bool fence = false;
};

// What memory steps reach of a peer's buffers: one made-up byte per peer, above any address of
// this rank's own, so that steps reaching one peer keep their order where one of them writes
// there. (Finer would be wrong: the peer's buffers may overlap, in place, however this rank's do.)
inline Footprint::Range peerFootprint(int peer) {
  const uintptr_t at = (uintptr_t{1} << 62) + static_cast<uintptr_t>(peer);
  return {at, at + 1};
}

// What a step touches; at(ref, count) gives the address range of count elements at ref.
template <typename At>
Footprint footprintOf(const Step& s, At&& at) {
  Footprint f;
  if (s.count == 0) {
    f.fence = true;
    return f;
  }
  const Footprint::Range peer = peerFootprint(s.peer);
  switch (s.kind) {
    case StepKind::kSend:
      f.read[0] = at(s.src, s.count);
      break;
    case StepKind::kRecv:
      f.write = at(s.dst, s.count);
      break;
    case StepKind::kRecvReduce:
    case StepKind::kCopy:
      f.read[0] = at(s.src, s.count);
      f.write = at(s.dst, s.count);
      break;
    case StepKind::kReduce:
      f.read[0] = at(s.src, s.count);
      f.read[1] = at(s.dst, s.count);
      f.write = f.read[1];
      break;
    case StepKind::kPut:
      f.read[0] = at(s.src, s.count);
      f.write = peer;
      break;
    case StepKind::kGet:
      f.read[0] = peer;
      f.write = at(s.dst, s.count);
      break;
    case StepKind::kGetReduce:
      f.read[0] = at(s.src, s.count);
      f.read[1] = peer;
      f.write = at(s.dst, s.count);
      break;
    case StepKind::kPutReduce:
      f.read[0] = at(s.src, s.count);
      f.read[1] = peer;
      f.write = peer;
      break;
    case StepKind::kSignal:
    case StepKind::kWait:
      f.fence = true;
      break;
  }
  return f;
}

class Dependencies {
 public:
  void build(const std::vector<Footprint>& steps);
  // The earlier steps step i waits for, ascending, without repeats.
  std::span<const uint32_t> of(uint32_t i) const {
    return {list_.data() + start_[i], list_.data() + start_[i + 1]};
  }
  size_t size() const { return start_.empty() ? 0 : start_.size() - 1; }

 private:
  std::vector<uint32_t> start_;
  std::vector<uint32_t> list_;
};

}  // namespace weft
