// Tree algorithms: pipelined binary trees. Broadcast and reduce use one tree rooted at the root;
// all-reduce uses a double binary tree (as NCCL does): two trees, each reducing up and
// broadcasting down half of the data, shaped so that most ranks that are leaves in one tree are
// inner nodes in the other, which halves the load on inner nodes.
#include <algorithm>

#include "collectives/algorithms.h"

namespace weft {
namespace {

struct TreeNode {
  int parent = -1;
  int child[2] = {-1, -1};
};

// In-order balanced binary tree over positions 0..n-1: the root of [lo, hi) is its middle.
// Leaves are mostly every other position, so shifting positions by one swaps leaves and inner
// nodes.
TreeNode inorderNode(int n, int pos) {
  TreeNode t;
  int lo = 0, hi = n;
  for (;;) {
    int mid = lo + (hi - lo) / 2;
    if (pos == mid) {
      if (lo < mid) t.child[0] = lo + (mid - lo) / 2;
      if (mid + 1 < hi) t.child[1] = mid + 1 + (hi - mid - 1) / 2;
      return t;
    }
    t.parent = mid;
    if (pos < mid) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
}

// The node of `rank` in the tree over positions (rank + shift) mod n, in ranks.
TreeNode rankNode(int n, int rank, int shift) {
  TreeNode t = inorderNode(n, modRank(rank + shift, n));
  auto toRank = [&](int pos) { return pos < 0 ? -1 : modRank(pos - shift, n); };
  return {toRank(t.parent), {toRank(t.child[0]), toRank(t.child[1])}};
}

// The tree whose root (position n/2) is rank `root`.
TreeNode rootedNode(int n, int rank, int root) {
  return rankNode(n, rank, n / 2 - root);
}

bool isLeaf(const TreeNode& t) {
  return t.child[0] < 0 && t.child[1] < 0;
}

// Folds the children's partial results for chunk c into buffer `acc` and returns where this
// node's partial result lies (its own input for a leaf).
Ref reduceUp(const TreeNode& t, Span c, BufId acc, Schedule* out) {
  Ref partial{kSendBuf, c.offset};
  for (int child : t.child) {
    if (child < 0) continue;
    out->recvReduce(child, partial, {acc, c.offset}, c.count);
    partial = {acc, c.offset};
  }
  return partial;
}

// Receives chunk c into RECV from the parent (the root has it in `src`) and passes it on.
void broadcastDown(const TreeNode& t, Span c, Ref src, Schedule* out) {
  if (t.parent >= 0) out->recv(t.parent, {kRecvBuf, c.offset}, c.count);
  for (int child : t.child) {
    if (child >= 0) out->send(child, t.parent >= 0 ? Ref{kRecvBuf, c.offset} : src, c.count);
  }
}

void broadcast(const CollArgs& a, size_t chunk, Schedule* out) {
  const TreeNode t = rootedNode(a.nranks, a.rank, a.root);
  if (t.parent < 0) out->copy({kSendBuf, 0}, {kRecvBuf, 0}, a.count);
  forEachChunk({0, a.count}, chunk, [&](Span c) {
    broadcastDown(t, c, {kSendBuf, c.offset}, out);
  });
}

// Non-roots accumulate in scratch: their RECV may not exist.
void reduce(const CollArgs& a, size_t chunk, Schedule* out) {
  const TreeNode t = rootedNode(a.nranks, a.rank, a.root);
  const bool root = t.parent < 0;
  if (!root && !isLeaf(t)) out->scratchCount = a.count;
  forEachChunk({0, a.count}, chunk, [&](Span c) {
    Ref partial = reduceUp(t, c, root ? kRecvBuf : kScratchBuf, out);
    if (!root) out->send(t.parent, partial, c.count);
  });
}

// Double binary tree: tree h handles half h of the vector. Chunk i of both trees goes up, then
// chunk i of both trees comes down; every rank emits its steps in this same global order, so
// messages between two ranks that are linked in both trees stay in matching FIFO order.
void allReduce(const CollArgs& a, size_t chunk, Schedule* out) {
  const TreeNode trees[2] = {rankNode(a.nranks, a.rank, 0), rankNode(a.nranks, a.rank, 1)};
  const Span halves[2] = {balancedBlock(a.count, 2, 0), balancedBlock(a.count, 2, 1)};
  const size_t chunks =
      std::max(chunksIn(halves[0].count, chunk), chunksIn(halves[1].count, chunk));
  for (size_t i = 0; i < chunks; ++i) {
    for (int h = 0; h < 2; ++h) {
      Span c = chunkOf(halves[h], chunk, i);
      Ref partial = reduceUp(trees[h], c, kRecvBuf, out);
      if (trees[h].parent >= 0) out->send(trees[h].parent, partial, c.count);
    }
    for (int h = 0; h < 2; ++h) {
      Span c = chunkOf(halves[h], chunk, i);
      broadcastDown(trees[h], c, {kRecvBuf, c.offset}, out);
    }
  }
}

}  // namespace

void buildTree(const CollArgs& args, size_t chunk, Schedule* out) {
  switch (args.kind) {
    case CollKind::kBroadcast:
      return broadcast(args, chunk, out);
    case CollKind::kReduce:
      return reduce(args, chunk, out);
    case CollKind::kAllReduce:
      return allReduce(args, chunk, out);
    default:
      return;
  }
}

}  // namespace weft
