// Single-copy collectives: for communicators whose ranks share a host and may read each other's
// memory (transports/cross_memory.h), all-to-alls, all-gathers and broadcasts in a band of sizes
// skip the staging areas. Each rank posts where its input is (in its slot's flag line), reads
// what it needs from its peers' inputs straight into its output, and publishes that it is done
// (SlotControl::opsDone). It returns only once every rank that reads its input is done too,
// so the caller may then reuse the input. One copy per byte, made by the kernel, instead of the
// staged path's two (into a staging area, out of it); a peer's input in weftMemAlloc memory is
// mapped and copied from here instead, as the mapped path would, without the kernel.
//
// By default only all-gathers of 2 ranks go, with 256K to 2M per peer (WEFT_SHM_SINGLE_COPY_*):
// there staging costs a third more copies (its own block in, every block out), and the blocks
// stay in cache. Measured here, broadcast and all-to-all at 4 ranks, all-gather at 4 ranks, and
// larger blocks stage faster.
//
// Reductions do not go single copy: an all-reduce that read each peer's slice 64K at a time
// (process_vm_readv), reduced it and wrote it back into the peer's output (process_vm_writev)
// ran 2-rank 256K-4M at 5.0-5.7 GB/s busbw against staging's 9.6-10.7; the kernel pins each
// 4K page it copies, and that cost about as much as the copy itself.
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

// Which collectives go single-copy: the kinds, how much a rank reads from each peer it reads,
// at least minBytes (0: none go) and at most maxBytes (0: no limit), and in communicators of at
// most maxRanks ranks (0: no limit).
struct SingleCopyLimits {
  uint32_t kinds = 0;  // bit per CollKind
  size_t minBytes = 0;
  size_t maxBytes = 0;
  int maxRanks = 0;

  // `colls` as WEFT_SHM_SINGLE_COPY_COLLS spells it: a comma-separated list of allgather,
  // broadcast and alltoall (underscores and blanks allowed), or empty for none.
  static Status parse(const std::string& colls, size_t minBytes, size_t maxBytes, int maxRanks,
                      SingleCopyLimits* out);
};

class SingleCopyOp : public GroupOp {
 public:
  // Whether this collective can go single-copy: the group may read every rank's memory, and
  // its kind, size and rank count are within the limits. Ranks decide alike where their
  // WEFT_SHM_SINGLE_COPY_* agree; the signature catches ranks whose settings differ.
  static bool fits(const DirectGroup& group, const CollArgs& args, size_t elemSize,
                   const SingleCopyLimits& limits);
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
