// The cost model: picks an algorithm for a collective from its size, the rank count and a link
// model (NCCL's tuning, UCC's selection). It prices an algorithm by building every rank's
// schedule and replaying it as timed messages (no data): steps wait for the earlier steps they
// conflict with and for earlier messages to the same peer, as the executor does; a message
// occupies the sender's and the receiver's port for bytes/bandwidth and arrives a latency
// later; copies and reductions run at local copy speed. Prices are cached per (collective,
// power-of-two size, element size, ranks, link model), so a call's choice is a hash lookup.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "collectives/algo_override.h"
#include "collectives/algorithms.h"
#include "collectives/schedule.h"

namespace weft {

struct LinkModel {
  double latencyUs = 1.0;       // per message, one way
  double bandwidthGBps = 8.0;   // per rank and direction
  double localCopyGBps = 20.0;  // copies and reductions in memory
};

struct AlgoChoice {
  Algo algo;
  double predictedUs;
};

// `bytes` follows NCCL's count: the whole vector for broadcast, reduce and all-reduce; per rank
// for reduce-scatter, all-gather and all-to-all; for all-to-allv the average block per peer
// (priced as all-to-all). Barriers ignore it.
AlgoChoice chooseAlgo(CollKind kind, size_t bytes, size_t elemSize, int nranks,
                      const LinkModel& link, const AlgoOverride& allowed);

// The predicted time of one algorithm; +infinity where it does not implement kind.
double predictUs(Algo algo, CollKind kind, size_t bytes, size_t elemSize, int nranks,
                 const LinkModel& link);

// Every algorithm that implements `kind`, with its prediction and whether `allowed` lets the
// model pick it, fastest first.
struct AlgoCandidate {
  Algo algo;
  double predictedUs;
  bool allowed;
};
std::vector<AlgoCandidate> rankAlgos(CollKind kind, size_t bytes, size_t elemSize, int nranks,
                                     const LinkModel& link, const AlgoOverride& allowed);

// The candidates other than `chosen` (every one where the call took a shared-memory path), for
// the COLL log: "tree 12.3 us, rd 40.1 us (excluded by WEFT_ALGO)"; "" when there is none.
std::string otherAlgos(CollKind kind, size_t bytes, size_t elemSize, int nranks,
                       const LinkModel& link, const AlgoOverride& allowed,
                       std::optional<Algo> chosen);

// A readable table of the candidates and the choice, for tools and debug logs.
std::string explainChoice(CollKind kind, size_t bytes, size_t elemSize, int nranks,
                          const LinkModel& link, const AlgoOverride& allowed);

// The timed replay itself, uncached: the makespan of one schedule per rank, in microseconds
// (+infinity if the messages do not match up). Element sizes turn counts into bytes.
double replayUs(const std::vector<Schedule>& schedules, size_t elemSize, const LinkModel& link);

}  // namespace weft
