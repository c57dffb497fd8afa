// Runs one collective through the schedule simulator on plain buffers and checks every rank's
// buffers against a reference computed here with plain loops, independent of the algorithms.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "collectives/algorithms.h"
#include "weft/weft.h"

namespace weft::test {

struct Case {
  Algo algo = Algo::kRing;
  CollKind kind = CollKind::kAllReduce;
  int nranks = 1;
  size_t count = 0;
  int root = 0;
  // SEND and RECV alias as the real API would have them (only where the collective allows it).
  bool inPlace = false;
  // Buffers a collective ignores are passed empty: non-roots' send buffer of a broadcast and
  // receive buffer of a reduce. Otherwise they are full-size and filled with sentinels.
  bool emptyUnused = false;
  size_t chunk = 16;
  size_t linkCapacity = 64;
  size_t paceBytes = 0;  // Link::paceBytes
  weftDataType_t type = weftInt32;
  weftRedOp_t op = weftSum;
  // All-to-allv: vcounts[p][q] elements go from rank p to rank q; the test lays them out with
  // gaps and in a different order on the receiving side.
  std::vector<std::vector<size_t>> vcounts;
  uint64_t seed = 1;  // SimOptions::seed: schedules with memory steps
  // Builds each rank's schedule instead of buildSchedule(algo, ...) when set (placed, tiered and
  // memory schedules).
  std::function<Status(const CollArgs&, const AlgoParams&, Schedule*)> build;
};

std::string describe(const Case& c);

bool supportsInPlace(CollKind kind);

// Simulates c (with a small link if asked) and compares all buffers with the reference.
::testing::AssertionResult runCase(const Case& c);

// All-to-allv counts with zeros and irregular sizes, scaled by `scale`.
std::vector<std::vector<size_t>> irregularCounts(int nranks, size_t scale);

}  // namespace weft::test
