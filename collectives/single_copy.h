// Single copy: for communicators whose ranks share a host and may read each other's memory
// (transports/cross_memory.h), all-to-alls, all-gathers and broadcasts in a band of sizes may
// skip the staging areas. Each rank posts where its input is, reads what it needs from its
// peers' inputs straight into its output with process_vm_readv, and signals the ranks it read
// that it is done: the mapped schedule (collectives/mapped_schedule.h), whose gets the kernel
// makes. It returns only once every rank that reads its input is done too, so the caller may
// then reuse the input. One copy per byte, made by the kernel, instead of the
// staged path's two (into a staging area, out of it).
//
// Which is faster depends on the moment. On a 2-core VM, 2-rank all_gather of 256K-1M per rank
// ran single copy about 4.5x faster than staged in one placement of the vCPUs, and 1.3-1.5x
// slower in another; the kernel's copy also costs about 3 us a page the first time it writes a
// page of the reader's output, and about 1 us a page the first time it reads one of the peer's
// input. So StagedOp (collectives/staged.h) runs the band and chooses at run time: one rank, the
// decider, times its calls with a TimedChoice (collectives/timed_choice.h), one per kind, and
// posts whether this call goes single copy; the others follow its post. They cannot choose alike
// on their own, as each would time different calls.
//
// By default (WEFT_SHM_SINGLE_COPY=auto) the band holds all-gathers and all-to-alls of 256K to 2M
// per peer, at any rank count (WEFT_SHM_SINGLE_COPY_*): there staging costs a third copy (its own
// block in, every block out), and the blocks stay in cache. Which way wins depends on the machine:
// on the first 2-core VM mostly staging, at 2 ranks and at 4; on a second (a Xeon with a 300M L3),
// mostly single copy, as Open MPI copies (2-rank all_gather of 4M, 20 calls a size: 460 us under
// auto, 657 staged, 514 Open MPI; 4-rank 987, 1207 and 1385). Broadcasts stay out: in the band a
// root waits for every rank's post before it stages (4 ranks, 256K: 149 us against 83 out of the
// band). Larger blocks stage faster on both VMs (the second's 2-rank all_gather of 8M-64M:
// 1.15-10.4 ms staged, 1.57-12.2 single copy).
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

// Which collectives are in the single-copy band: the kinds, how much a rank reads from each
// peer it reads, at least minBytes (0: none go) and at most maxBytes (0: no limit), and in
// communicators of at most maxRanks ranks (0: no limit).
struct SingleCopyLimits {
  uint32_t kinds = 0;  // bit per CollKind
  size_t minBytes = 0;
  size_t maxBytes = 0;
  int maxRanks = 0;

  // `colls` as WEFT_SHM_SINGLE_COPY_COLLS spells it: a comma-separated list of allgather,
  // broadcast and alltoall (underscores and blanks allowed), or empty for none.
  static Status parse(const std::string& colls, size_t minBytes, size_t maxBytes, int maxRanks,
                      SingleCopyLimits* out);

  // Whether this collective is in the band, and the group may read every rank's memory. Ranks
  // decide alike where their WEFT_SHM_SINGLE_COPY* agree; the signature catches ranks whose
  // settings differ.
  bool covers(const DirectGroup& group, const CollArgs& args, size_t elemSize) const;
};

// How the decider tries the way not in use (TimedChoice::Trial). A single-copy call right after
// staged ones ran up to twice as slow as the single-copy calls after it: 4-rank all_to_all of
// 4M, single copy 1.6-2.1 ms in its first two calls of a try and 0.9-1.1 after, staged 1.4-1.8
// throughout. Tried one call at a time, single copy never took over there, though it was the
// faster. So each size in a try warms up for 2 calls, the try compares 2 after them, and tries
// that lose back off.
inline constexpr TimedChoice::Trial kSingleCopyTrial{2, 2, true};

// The rank that chooses whether a call in the band goes single copy: rank 0, or for a broadcast
// the rank after the root, which reads, so that its time is the whole call's either way (the
// root of a staged broadcast returns once it has staged its chunks).
int singleCopyDecider(const CollArgs& args);

}  // namespace weft
