// A schedule is what one rank does in one collective: an ordered list of steps (send a range to a
// peer, receive a range, receive and reduce, copy), with element offsets into the send, receive
// and scratch buffers. Algorithms are pure functions that build schedules (DESIGN.md, decision
// 8): the simulator runs them on plain buffers, the executor on real transports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace weft {

// Buffers are numbered: algorithms use the first three; a group of sends and receives adds one
// per call.
using BufId = uint16_t;
constexpr BufId kSendBuf = 0;
constexpr BufId kRecvBuf = 1;
constexpr BufId kScratchBuf = 2;

struct Ref {
  BufId buf = kRecvBuf;
  size_t offset = 0;  // in elements of that buffer
};

enum class StepKind : uint8_t {
  kSend,        // send count elements at src to peer
  kRecv,        // receive count elements from peer into dst
  kRecvReduce,  // dst = src (op) what arrives from peer; dst may be src
  kCopy,        // dst = src
  kReduce,      // dst = dst (op) src
};

struct Step {
  StepKind kind = StepKind::kCopy;
  int peer = -1;
  Ref src;
  Ref dst;
  size_t count = 0;
};

struct Schedule {
  std::vector<Step> steps;
  size_t scratchCount = 0;  // elements of scratch the steps address
  // A group of sends and receives, whose messages a receive from any source may take.
  bool pointToPoint = false;

  // Builders. Empty sends and receives are dropped (both sides compute the same sizes), except
  // by signal()/wait(), which carry no data and only order ranks.
  void send(int peer, Ref src, size_t count);
  void recv(int peer, Ref dst, size_t count);
  void recvReduce(int peer, Ref src, Ref dst, size_t count);
  void copy(Ref src, Ref dst, size_t count);
  void reduce(Ref src, Ref dst, size_t count);
  void signal(int peer);
  void wait(int peer);
};

enum class CollKind : uint8_t {
  kBroadcast,
  kReduce,
  kAllReduce,
  kReduceScatter,
  kAllGather,
  kAllToAll,
  kAllToAllv,
  kBarrier,
};
constexpr int kNumCollKinds = 8;

const char* collName(CollKind kind);
// Whether the collective combines ranks' data with a reduction operator.
inline bool isReduction(CollKind kind) {
  return kind == CollKind::kReduce || kind == CollKind::kAllReduce ||
         kind == CollKind::kReduceScatter;
}

// What a collective call asks for, as the algorithms see it. count follows NCCL: the whole vector
// for broadcast, reduce and all-reduce; per rank for reduce-scatter (recvcount), all-gather
// (sendcount) and all-to-all.
struct CollArgs {
  CollKind kind = CollKind::kAllReduce;
  size_t count = 0;
  int root = 0;
  int nranks = 1;
  int rank = 0;
  // All-to-allv only: per-rank counts and displacements in elements.
  const size_t* sendCounts = nullptr;
  const size_t* sendDispls = nullptr;
  const size_t* recvCounts = nullptr;
  const size_t* recvDispls = nullptr;
};

// Elements the send and receive buffers of `rank` hold for these arguments.
size_t sendBufferCount(const CollArgs& args);
size_t recvBufferCount(const CollArgs& args);

// Tuning the algorithms take from the caller.
struct AlgoParams {
  size_t chunkCount = 1u << 18;  // pipelining slice, in elements
};

std::string describeStep(const Step& step);

}  // namespace weft
