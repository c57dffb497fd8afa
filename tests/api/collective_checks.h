// Checks of every collective on one rank's communicator, for every type, operator, count and
// placement, against the reference in reference.h. Used by the multi-process tests (one rank
// per process) and the threaded ones (one rank per thread). Failures are gtest EXPECTs.
#pragma once

#include <cstddef>
#include <vector>

#include "weft/weft.h"

namespace weft::test {

enum class Coll {
  kAllReduce,
  kBroadcast,
  kReduce,
  kReduceScatter,
  kAllGather,
  kAllToAll,
  kAllToAllv
};
constexpr Coll kAllColls[] = {Coll::kAllReduce,     Coll::kBroadcast, Coll::kReduce,
                              Coll::kReduceScatter, Coll::kAllGather, Coll::kAllToAll,
                              Coll::kAllToAllv};
const char* nameOf(Coll coll);

// 0, 1, 7, 1023 and about 1M + 3, or WEFT_TEST_LARGE_COUNT (per rank for collectives whose
// count is per rank, so every collective moves about the same bytes).
std::vector<size_t> standardCounts(Coll coll, int nranks);

// Whether the buffers the checks allocate from now on come from weftMemAlloc, so that the
// collectives of an all-local communicator go mapped (collectives/mapped.h).
void useWeftMemAlloc(bool on);

// Runs coll for the types (all of them unless given; and ops, where it reduces), counts, in
// place and out of place; at the largest count, ops other than sum only for int32, float32 and
// float16.
void checkCollective(weftComm_t comm, Coll coll, const std::vector<size_t>& counts,
                     weftStream_t stream = nullptr, const std::vector<weftDataType_t>& types = {});

// One call, checked as checkCollective checks each (in place is ignored for all-to-allv, the
// operator for collectives that do not reduce).
void checkOneCall(weftComm_t comm, Coll coll, weftDataType_t type, weftRedOp_t op, size_t count,
                  bool inPlace, int root, weftStream_t stream = nullptr);

// In one group, each rank sends a distinct block to every other rank and checks what it got.
void checkSendRecv(weftComm_t comm);

}  // namespace weft::test
