// Executor: runs one rank's schedule over channels. Steps start as soon as the steps they depend
// on are done, so independent sends and receives overlap and chunks pipeline; a step depends on
// every earlier step whose memory it conflicts with (read after write, write after read or
// write), computed from real addresses so in-place calls are ordered correctly. Sends and
// receives with one peer keep their schedule order, the order messages travel in. Memory steps
// run through a MemoryFace: puts, gets and reductions from peers' buffers as local steps, waits
// once the peer's signal is there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "collectives/dependencies.h"
#include "collectives/memory_face.h"
#include "collectives/progressable.h"
#include "collectives/reduce.h"
#include "collectives/schedule.h"
#include "src/base/status.h"
#include "transports/channel.h"

namespace weft {

struct BufferView {
  char* base = nullptr;
  size_t count = 0;  // elements
  size_t elemSize = 1;
};

class Executor : public Progressable {
 public:
  Executor() = default;
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // channels[p] talks to rank p (nullptr where the schedule names no such peer). reduce may be
  // nullptr for schedules without reductions, memory for schedules without memory steps. Checks
  // every step against this rank's buffers (memory steps against the peers' as they run).
  Status start(const Schedule& schedule, std::vector<BufferView> buffers, ReduceFn reduce,
               Channel* const* channels, int nranks, MemoryFace* memory = nullptr);

  // The call this run belongs to, stamped on every message it sends and expected on every one
  // it receives (collectives/call_stamp.h). Point-to-point schedules leave it zero.
  void setCall(const CallStamp& call) { call_ = call; }

  // Runs the same schedule again on other buffers of the same sizes and the same overlaps
  // (in place or not) as the ones start() analysed, without analysing it again.
  void rebind(const std::vector<BufferView>& buffers, MemoryFace* memory = nullptr);
  // At most this many local steps a progress() call, so that its caller can look at other work
  // in between (and the simulator interleaves ranks finely). Default: no limit.
  void setLocalStepsPerPass(size_t steps) { localStepsPerPass_ = steps; }
  // Runs the local steps that are ready in an order drawn from `seed` instead of schedule
  // order, as the simulator does: a schedule must not depend on an order its dependencies do
  // not impose.
  void shuffleLocalSteps(uint64_t seed) {
    shuffle_ = true;
    random_.seed(seed);
  }
  // Bytes this run's memory steps read from the peers' buffers and wrote into them.
  uint64_t bytesGotten() const { return gotten_; }
  uint64_t bytesPut() const { return put_; }

  // Moves whatever can move now. *progressed says whether anything did.
  Status progress(bool* progressed) override;
  bool done() const override { return completed_ == steps_.size(); }

  // The steps still waiting, for timeout messages: "receive 4096 bytes from rank 3 (step 5 of
  // 12)".
  std::string describeWait() const override;
  // Peers this executor still waits on.
  std::vector<int> pendingPeers() const override;
  // The peer whose signal a memory wait that could end now waits for; -1 if none does.
  int signalAwaited() const { return readyWaits_.empty() ? -1 : steps_[readyWaits_[0]].peer; }
  // (peer, is a receive) for every message that could move but for its link: what a blocked
  // runner should wait on.
  const std::vector<std::pair<int, bool>>& pendingIo() override;

 private:
  // Receives pieces of a receive-reduce and reduces them as they arrive.
  class ReduceSink : public PayloadSink {
   public:
    void reset(char* dst, const char* src, size_t elemSize, ReduceFn reduce);
    void accept(size_t offset, const void* data, size_t bytes) override;

   private:
    char* dst_ = nullptr;
    const char* src_ = nullptr;
    size_t elemSize_ = 1;
    ReduceFn reduce_ = nullptr;
    char carry_[16] = {};
    size_t carried_ = 0;
  };
  struct PeerQueues {
    int peer = -1;
    Channel* channel = nullptr;
    std::vector<uint32_t> sends, recvs;
    size_t sendHead = 0, recvHead = 0;
    OutgoingMessage out;
    IncomingMessage in;
    ReduceSink sink;
    bool sendActive = false, recvActive = false;
    // Where this run's pacing counts from, in the channel's lifetime totals (sendBudget).
    uint64_t sentBase = 0, receivedBase = 0;
  };

  Status checkStep(const Step& s) const;
  size_t bytesOf(const Ref& r, size_t count) const { return count * buffers_[r.buf].elemSize; }
  // A step's length: its count in elements of its first buffer (the source, or a receive's
  // destination).
  size_t stepBytes(const Step& s) const;
  char* addressOf(const Ref& r) const {
    return buffers_[r.buf].base + r.offset * buffers_[r.buf].elemSize;
  }
  void restart();
  void complete(uint32_t index);
  Status runLocal(uint32_t index);
  Status runLocalSteps(bool* progressed);
  Status takeSignals(bool* progressed);
  size_t sendBudget(const PeerQueues& q) const;
  Status progressSends(PeerQueues& q, bool* progressed);
  Status progressRecvs(PeerQueues& q, bool* progressed);

  std::vector<Step> steps_;
  std::vector<uint32_t> depsLeft_;   // per step: the steps it still waits for
  std::vector<uint32_t> depsCount_;  // per step: all the steps it waits for
  Dependencies dependencies_;
  std::vector<uint32_t> dependentsStart_;  // CSR: dependents of step i
  std::vector<uint32_t> dependents_;
  std::vector<BufferView> buffers_;
  std::vector<PeerQueues> peers_;
  std::vector<int> peerIndex_;  // rank -> index in peers_, -1 if none
  std::vector<uint32_t> readyLocal_;
  std::vector<uint32_t> initialLocal_;  // local steps that depend on nothing
  std::vector<uint32_t> readyWaits_;    // memory waits whose dependencies are done
  std::vector<uint32_t> initialWaits_;  // waits that depend on nothing
  MemoryFace* memory_ = nullptr;
  size_t localStepsPerPass_ = SIZE_MAX;
  bool shuffle_ = false;
  std::mt19937_64 random_;
  uint64_t gotten_ = 0, put_ = 0;
  std::vector<std::pair<int, bool>> pendingIo_;
  ReduceFn reduce_ = nullptr;
  uint16_t sendFlags_ = 0;  // of every message sent and received (transports/channel.h)
  CallStamp call_;
  size_t completed_ = 0;
};

}  // namespace weft
