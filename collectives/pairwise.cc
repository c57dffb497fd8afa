// Pairwise exchange all-to-all(v): at step k every rank sends to rank+k and receives from
// rank-k, so each step is a permutation and no rank is the target of two senders at once. The
// block a rank keeps for itself is a local copy.
#include "collectives/algorithms.h"

namespace weft {
namespace {

// Where the block for (or from) `peer` lies: counts and displacements in elements.
struct Layout {
  const size_t* counts;
  const size_t* displs;
  size_t uniform;  // all-to-all: every block is `uniform` elements at peer * uniform
  size_t count(int peer) const { return counts ? counts[peer] : uniform; }
  size_t offset(int peer) const {
    return displs ? displs[peer] : static_cast<size_t>(peer) * uniform;
  }
};

}  // namespace

void buildPairwise(const CollArgs& a, Schedule* out) {
  const bool v = a.kind == CollKind::kAllToAllv;
  const Layout sendL{v ? a.sendCounts : nullptr, v ? a.sendDispls : nullptr, a.count};
  const Layout recvL{v ? a.recvCounts : nullptr, v ? a.recvDispls : nullptr, a.count};
  const int n = a.nranks, r = a.rank;
  out->copy({kSendBuf, sendL.offset(r)}, {kRecvBuf, recvL.offset(r)}, sendL.count(r));
  for (int k = 1; k < n; ++k) {
    const int to = modRank(r + k, n), from = modRank(r - k, n);
    out->send(to, {kSendBuf, sendL.offset(to)}, sendL.count(to));
    out->recv(from, {kRecvBuf, recvL.offset(from)}, recvL.count(from));
  }
}

}  // namespace weft
