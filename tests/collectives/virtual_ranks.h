// For tests that run one collective operation per virtual rank in this thread.
#pragma once

#include <cstddef>
#include <vector>

#include "collectives/schedule.h"
#include "src/base/status.h"

namespace weft::test {

// Rank r's arguments of a collective on n ranks.
inline CollArgs collArgs(CollKind kind, size_t count, int root, int r, int n) {
  CollArgs a;
  a.kind = kind;
  a.count = count;
  a.root = root;
  a.rank = r;
  a.nranks = n;
  return a;
}

// Progresses every rank, from the last one backwards so that no rank is always first, until all
// are done; an error if one fails or `passes` go by first.
template <typename Op>
Status progressUntilDone(std::vector<Op>& ops, int passes) {
  for (int pass = 0; pass < passes; ++pass) {
    bool all = true;
    for (auto op = ops.rbegin(); op != ops.rend(); ++op) {
      bool progressed = false;
      WEFT_RETURN_IF_ERROR(op->progress(&progressed));
      all = all && op->done();
    }
    if (all) return okStatus();
  }
  return Status(weftInternalError, "stuck: " + ops[0].describeWait());
}

}  // namespace weft::test
