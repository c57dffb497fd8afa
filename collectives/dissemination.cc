// Dissemination barrier: in round k every rank signals rank + 2^k and waits for rank - 2^k.
// After ceil(log2 n) rounds each rank has heard, directly or through others, from every rank.
// Signals and waits carry no data; the executor orders them as fences.
#include "collectives/algorithms.h"

namespace weft {

void buildDissemination(const CollArgs& a, Schedule* out) {
  const int n = a.nranks, r = a.rank;
  for (int dist = 1; dist < n; dist <<= 1) {
    out->messageSignal(modRank(r + dist, n));
    out->messageWait(modRank(r - dist, n));
  }
}

}  // namespace weft
