// The end of a step's gradient reductions, as DataParallel and ParameterServer share it.
#pragma once

#include <string>

#include "errors.h"
#include "weft/parallel/buckets.hpp"
#include "weft/weft.hpp"

namespace weft::parallel {

// After waiting for the buckets' collectives (`waited`): readiness starts the next step whatever
// happened; then a failed wait, and gradients never marked ready, are errors naming `call`.
inline void endReductions(BucketReadiness& readiness, weftResult_t waited, const Comm& comm,
                          const char* who, const char* call) {
  const std::string missing = readiness.endStep();
  check(waited, comm.get());
  if (!missing.empty()) {
    fail(weftInvalidUsage, who,
         std::string(call) + " before the gradients of parameters " + missing +
             " were marked ready (their buckets were not reduced)");
  }
}

}  // namespace weft::parallel
