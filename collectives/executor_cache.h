// Executors kept ready for collectives a communicator runs again and again: the schedule is
// built and its dependencies analysed once per (collective, count, type, operator, root, buffer
// layout), and later calls only rebind the buffers. A training loop calls the same few
// collectives millions of times.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "collectives/algorithms.h"
#include "collectives/executor.h"
#include "collectives/lru_cache.h"
#include "collectives/placement.h"
#include "collectives/schedule.h"
#include "weft/weft.h"

namespace weft {

struct ExecutorKey {
  CollKind kind = CollKind::kAllReduce;
  size_t count = 0;
  weftDataType_t type = weftFloat32;
  weftRedOp_t op = weftSum;
  int root = 0;
  // Bit 0: send and receive buffers overlap (the in-place layout); bit 1: no send buffer;
  // bit 2: no receive buffer. Dependencies follow from which buffers overlap.
  uint8_t layout = 0;

  bool operator==(const ExecutorKey&) const = default;
};

struct CachedExecutor {
  Algo algo = Algo::kRing;
  bool tiered = false;  // in tiers across hosts, with these algorithms
  TierAlgos tiers;
  size_t scratchCount = 0;
  std::unique_ptr<Executor> executor;
};

using ExecutorCache = LruCache<ExecutorKey, CachedExecutor, 32>;

}  // namespace weft
