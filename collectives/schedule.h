// A schedule is what one rank does in one collective: an ordered list of steps (send a range to a
// peer, receive a range, receive and reduce, copy), with element offsets into the send, receive
// and scratch buffers. Algorithms are pure functions that build schedules (DESIGN.md, decision
// 8): the simulator runs them on plain buffers, the executor on real transports.
//
// Memory steps reach a peer's buffers through the transports' memory face instead of messages
// (collectives/memory_face.h): put into them, get from them, reduce from them, and signal a peer
// that waits. A Ref that a memory step takes from the peer addresses the peer's buffer of that
// number, which holds the same element type. A memory step touches a peer's buffers only between
// a wait for that peer's signal and a signal to it that the peer waits for: the schedule orders
// the ranks, and signals and waits order the steps around them on the rank (they are fences). On
// one rank, memory steps that reach the same peer keep their order where one of them writes
// there (collectives/dependencies.h).
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
  // Memory steps (above); peer is never the rank itself.
  kPut,        // the peer's dst = src
  kGet,        // dst = the peer's src
  kGetReduce,  // dst = src (op) the peer's `with`; dst may be src
  kPutReduce,  // the peer's dst = src (op) the peer's `with`; dst may be `with`
  kSignal,     // raises this rank's signal to the peer
  kWait,       // waits for the peer's next signal to this rank
};

// Step options.
constexpr uint8_t kStreamStores = 1;  // copy, put, get: non-temporal stores (stream_copy.h)

struct Step {
  StepKind kind = StepKind::kCopy;
  uint8_t options = 0;
  int peer = -1;
  Ref src;
  Ref dst;
  size_t count = 0;
  Ref with;  // kGetReduce's and kPutReduce's operand in the peer's memory
};

inline bool isMemoryStep(StepKind kind) {
  return kind == StepKind::kPut || kind == StepKind::kGet || kind == StepKind::kGetReduce ||
         kind == StepKind::kPutReduce || kind == StepKind::kSignal || kind == StepKind::kWait;
}
// Steps the executor runs on this rank alone, once the steps they depend on are done.
inline bool isLocalStep(StepKind kind) {
  return kind == StepKind::kCopy || kind == StepKind::kReduce ||
         (isMemoryStep(kind) && kind != StepKind::kWait);
}

struct Schedule {
  std::vector<Step> steps;
  size_t scratchCount = 0;  // elements of scratch the steps address
  // A group of sends and receives, whose messages a receive from any source may take.
  bool pointToPoint = false;

  // Builders. Empty sends and receives are dropped (both sides compute the same sizes), except
  // by messageSignal()/messageWait(), which carry no data and only order ranks.
  void send(int peer, Ref src, size_t count);
  void recv(int peer, Ref dst, size_t count);
  void recvReduce(int peer, Ref src, Ref dst, size_t count);
  void copy(Ref src, Ref dst, size_t count, uint8_t options = 0);
  void reduce(Ref src, Ref dst, size_t count);
  void messageSignal(int peer);
  void messageWait(int peer);
  // Memory steps; empty ones are dropped, as above.
  void put(int peer, Ref src, Ref dst, size_t count, uint8_t options = 0);
  void get(int peer, Ref src, Ref dst, size_t count, uint8_t options = 0);
  void getReduce(int peer, Ref src, Ref with, Ref dst, size_t count);
  void putReduce(int peer, Ref src, Ref with, Ref dst, size_t count);
  void memorySignal(int peer);
  void memoryWait(int peer);
  // Whether any step is a memory step: who runs the schedule must give a memory face.
  bool usesMemory() const;
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
