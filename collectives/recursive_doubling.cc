// Recursive doubling all-reduce, for small vectors: log2(n) rounds in which partners exchange
// their whole partial result. A rank count that is not a power of two is handled as MPICH does:
// of the first 2*extra ranks, each even one hands its input to its odd neighbour and sits out,
// and gets the result back at the end.
//
// Partners send from RECV while receiving, so each round receives into scratch and reduces
// locally: receiving straight into the buffer being sent would make both partners wait for
// their own send to drain before they receive, a deadlock once messages outgrow the link.
#include <bit>

#include "collectives/algorithms.h"

namespace weft {

void buildRecursiveDoubling(const CollArgs& a, Schedule* out) {
  const int n = a.nranks, r = a.rank;
  const int pof2 = static_cast<int>(std::bit_floor(static_cast<unsigned>(n)));
  const int extra = n - pof2;
  const Ref send{kSendBuf, 0}, recv{kRecvBuf, 0}, scratch{kScratchBuf, 0};
  const bool folded = r < 2 * extra;
  if (folded && r % 2 == 0) {
    out->send(r + 1, send, a.count);
    out->recv(r + 1, recv, a.count);
    return;
  }
  out->scratchCount = a.count;
  out->copy(send, recv, a.count);  // a no-op in place
  if (folded) {
    out->recv(r - 1, scratch, a.count);
    out->reduce(scratch, recv, a.count);
  }
  // Ranks that take part are numbered 0..pof2-1.
  const int vrank = folded ? r / 2 : r - extra;
  auto real = [&](int v) { return v < extra ? 2 * v + 1 : v + extra; };
  for (int mask = 1; mask < pof2; mask <<= 1) {
    const int peer = real(vrank ^ mask);
    out->send(peer, recv, a.count);
    out->recv(peer, scratch, a.count);
    out->reduce(scratch, recv, a.count);
  }
  if (folded) out->send(r - 1, recv, a.count);
}

}  // namespace weft
