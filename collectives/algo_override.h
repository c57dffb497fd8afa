// WEFT_ALGO: which algorithms the cost model may pick, per collective.
//
//   ""                               every algorithm
//   "ring" or "ring,tree"            only those; a collective that none of them implements
//                                    keeps every algorithm that implements it
//   "^tree"                          every algorithm but tree
//   "allreduce:tree;broadcast:ring"  per collective (the others keep every algorithm); an
//                                    entry without a collective sets the default for the rest
//
// Collectives: broadcast, reduce, allreduce, reducescatter, allgather, alltoall, alltoallv,
// barrier (underscores allowed: all_reduce). Names are case-insensitive.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "collectives/algorithms.h"
#include "collectives/schedule.h"
#include "src/base/status.h"

namespace weft {

class AlgoOverride {
 public:
  AlgoOverride();  // allows every algorithm

  // Bad text gives weftInvalidArgument naming what is wrong; *out is unchanged then.
  static Status parse(const std::string& text, AlgoOverride* out);

  // Whether the cost model may pick `algo` for `kind`; false where algo does not implement kind.
  bool allows(CollKind kind, Algo algo) const;

 private:
  std::array<uint8_t, kNumCollKinds> allowed_{};  // bit per Algo
};

// Parses a collective name as WEFT_ALGO spells it ("allreduce", "all_reduce", ...).
std::optional<CollKind> parseCollName(std::string_view name);

}  // namespace weft
