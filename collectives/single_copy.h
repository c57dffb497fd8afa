// Single-copy collectives: for communicators whose ranks share a host and may read each other's
// memory (transports/cross_memory.h), large all-to-alls, all-gathers and broadcasts skip the
// staging areas. Each rank posts where its input is (in its slot's flag line), reads what it
// needs from its peers' inputs straight into its output, and publishes that it is done
// (SlotControl::opsDone). It returns only once every rank that reads its input is done too,
// so the caller may then reuse the input. One copy per byte, made by the kernel, instead of the
// staged path's two (into a staging area, out of it).
//
// Who reads what:
//   all_to_all   block `me` of every peer's input, into block r of the output
//   all_gather   every peer's input, into block r of the output
//   broadcast    the root's input; the root reads nothing
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "collectives/direct.h"

namespace weft {

class SingleCopyOp : public GroupOp {
 public:
  // Whether this collective can go single-copy: the group may read every rank's memory, the
  // kind has a single-copy form, and a rank reads at least minBytes from each peer it reads
  // (minBytes 0: never). Depends only on values every rank shares.
  static bool fits(const DirectGroup& group, const CollArgs& args, size_t elemSize,
                   size_t minBytes);
  // As DirectOp::start; fits() must hold.
  void start(DirectGroup* group, const CollArgs& args, const void* send, void* recv,
             size_t elemSize, uint64_t signature);

  Status progress(bool* progressed) override;
  bool done() const override { return state_ == State::kDone; }
  std::string describeWait() const override;

 private:
  enum class State { kWaitSlot, kReading, kWaitReaders, kDone };

  // Whether rank `reader` reads rank `owner`'s input.
  bool reads(int reader, int owner) const;
  void copyOwn();
  Status readPosted(bool* all, bool* moved);
  Status readFrom(int peer);
  bool readersDone();

  State state_ = State::kDone;
  std::vector<char> read_;  // by peer: whether its part is in the output
};

}  // namespace weft
