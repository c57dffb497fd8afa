// Mapped collectives: when every buffer that a collective of an all-local communicator shares
// lies in weftMemAlloc memory (transports/shareable_memory.h), each rank maps its peers' buffers
// and does its share of the work in them directly, with no staging in between: inputs are read
// once and outputs written once, the least memory traffic a collective can have.
//
// Each rank's share, where in_r and out_r are rank r's send and receive buffers:
//   all_reduce      slice r of the vector: reduced from every in into out_r, copied to every out
//   reduce          slice r: reduced from every in into the root's out
//   reduce_scatter  out_r, reduced from block r of every in
//   all_gather      out_r[block p] = in_p for every p
//   all_to_all      out_r[block p] = block r of in_p for every p
//   broadcast       out_r = in_root
// A reduction starts with the input that its destination may alias (in place), so no input is
// read after it is overwritten; one rank computes each element, so all ranks get the same bits.
// The shares are a schedule (collectives/mapped_schedule.h).
//
// StagedOp decides at run time (collectives/staged.h): every rank posts where its buffers are
// (MappedPost); once all have posted, they go mapped if every rank's are in such memory, and
// staged otherwise, all alike. A rank that then fails to map a peer's buffers fails the call while
// the others may still write its outputs: as after any failed collective, the outputs are
// undefined and the communicator is unusable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "collectives/schedule.h"
#include "collectives/slot_area.h"
#include "src/base/status.h"
#include "transports/shareable_memory.h"

namespace weft {

// What a rank posts in its slot's flag line: where its buffers lie in weftMemAlloc memory.
struct MappedPost {
  int32_t sendFd = -1;  // -1: not in weftMemAlloc memory
  int32_t recvFd = -1;
  uint64_t sendSerial = 0;
  uint64_t recvSerial = 0;
  uint64_t sendOffset = 0;
  uint64_t recvOffset = 0;
};
static_assert(sizeof(MappedPost) <= kInlineSlotBytes);

// Which of rank r's buffers other ranks touch.
struct MappedNeeds {
  bool send = false;
  bool recv = false;
};
MappedNeeds mappedNeeds(const CollArgs& args, int r);

// The bytes of a peer's buffers that this rank's share reads or writes, from the buffer's start
// (the same part of its send and receive buffers): all that this rank's mappings of them need
// populated.
ByteRange mappedShare(const CollArgs& args, size_t elemSize);

// Describes this rank's buffers; whether every one its peers need lies in weftMemAlloc memory.
// For the collectives StagedOp runs, all of which have a mapped form.
bool describeMapped(const CollArgs& args, const void* send, const void* recv, size_t elemSize,
                    MappedPost* post);

// Every rank's buffers as addresses in this process (nullptr where unused).
struct MappedBuffers {
  std::vector<const char*> send;
  std::vector<char*> recv;
};

}  // namespace weft
