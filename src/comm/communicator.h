// Communicator: one rank's membership in a group of ranks. It ties the layers together at init:
// the bootstrap meets the peers, the topology of hosts decides shm or tcp per peer, transports
// connect, and collectives get channels, a cost model and an issue order.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "collectives/algo_override.h"
#include "collectives/cost_model.h"
#include "collectives/direct.h"
#include "collectives/executor_cache.h"
#include "collectives/placement.h"
#include "collectives/schedule.h"
#include "collectives/single_copy.h"
#include "collectives/staged.h"
#include "src/base/socket.h"
#include "src/base/status.h"
#include "src/bootstrap/bootstrap.h"
#include "src/comm/config.h"
#include "src/comm/flight_recorder.h"
#include "src/comm/traffic_stats.h"
#include "transports/channel.h"
#include "transports/transport.h"

namespace weft {

class Communicator {
 public:
  enum class State { kInitializing, kReady, kFailed, kFinalized };

  Communicator(int rank, int nranks, CommConfig config);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  // Joins the communicator the id names; blocks until every rank has joined.
  Status connect(const UniqueIdData& id);
  // The same in a background thread (config.blocking = 0); waitUntilReady() waits for it.
  void connectInBackground(const UniqueIdData& id);
  Status waitUntilReady();
  State state() const { return state_.load(); }

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  const CommConfig& config() const { return config_; }
  Channel* const* channels() const { return channelPtrs_.data(); }
  // The link to peer, or nullptr (self, or before init finished).
  Link* link(int peer) const {
    return peer >= 0 && static_cast<size_t>(peer) < links_.size() ? links_[peer].get() : nullptr;
  }
  // How idle waits pass the time (Backoff::forProgress), unless WEFT_WAIT says: they block early
  // where more ranks of this communicator share this host than CPUs they may run on together,
  // yield where peers are behind sockets, and spin first otherwise. Over a veth with both ranks
  // on one CPU, spinning cut a 64M send/recv to a third of yielding's bandwidth, and blocking
  // early let the scheduler put unpinned ranks on one CPU now and then, halving theirs.
  IdleWait idleWait() const { return idleWait_; }
  // For a wait that has spun a while without progress: whether a peer on this host last waited
  // on the CPU this thread runs on (then it can only move once this thread lets it run, and
  // spinning on is wasted). Also records this CPU in this rank's doorbell for the peers' checks.
  // Ranks the scheduler stacks on one CPU (wakers pull wakees to their CPU while others keep
  // every CPU busy) would otherwise spin away their turns. A peer's CPU is the one of its last
  // long wait: one that has moved since makes a wait yield early until it waits again. The
  // first time it finds a peer there, it says so at WARN.
  bool sharesCpuWithPeer();
  // Staged outputs this large or larger are stored past the cache (StagedOp::start): lower
  // where ranks take turns on cores and lose their cached outputs between calls anyway.
  size_t streamBytes() const {
    return oversubscribed_ ? config_.shmStreamBytesOversubscribed : config_.shmStreamBytes;
  }
  const LinkModel& linkModel() const { return linkModel_; }
  // Links inside a host and between hosts, for pricing tiers.
  const LinkModel& intraHostModel() const { return intraHostModel_; }
  const LinkModel& interHostModel() const { return interHostModel_; }
  // Ranks in the order rings follow: hosts together, and inside a host by socket and NUMA
  // node; and each host's ranks in that order.
  const std::vector<int>& ringOrder() const { return ringOrder_; }
  const HostGroups& hostGroups() const { return hostGroups_; }
  const AlgoOverride& algoOverride() const { return algoOverride_; }
  const SingleCopyLimits& singleCopyLimits() const { return singleCopyLimits_; }
  AlgoParams algoParams(size_t elemSize) const;
  Bootstrap& bootstrap() { return *bootstrap_; }
  std::string describe() const;  // "rank 2 of 4 (name)"
  // The id every rank of this communicator shares (its unique id's tag), once connecting began.
  uint64_t tag() const { return tag_.load(std::memory_order_relaxed); }
  // The last calls (WEFT_TRACE_BUFFER of them), for WEFT_TRACE_DUMP and weft-trace.
  FlightRecorder& recorder() { return recorder_; }

  // Scratch memory for the running operation; grows, never shrinks.
  char* scratch(size_t bytes);
  // The copy of an in-place all-to-all's input that the running operation sends from (apart
  // from scratch, which its plan takes too); grows, never shrinks.
  char* inPlaceStage(size_t bytes);
  // Executors of recent collectives; only the running operation touches them.
  ExecutorCache& executors() { return executors_; }
  // Whether this is the first call of its shape to take this path (`how`, a packed label), for
  // the COLL log's lines on the shared-memory paths. Remembers a bounded number of shapes.
  bool firstOfShape(const ExecutorKey& key, uint64_t how);
  // Shared slots and staging areas of all ranks when every peer shares memory with this rank,
  // else nullptr; and the one direct or staged operation of each kind that may run at a time.
  DirectGroup* direct() { return direct_.get(); }
  DirectOp& directOp() { return directOp_; }
  StagedOp& stagedOp() { return stagedOp_; }

  // Operations run in the order they were issued, whatever thread or stream runs them.
  uint64_t takeTicket() { return nextTicket_.fetch_add(1); }
  Status waitForTurn(uint64_t ticket);
  // Ends one turn. Not only the holder's: a waiter whose wait failed ends its own too.
  void endTurn() { doneTicket_.fetch_add(1); }
  bool isTurn(uint64_t ticket) const {
    return doneTicket_.load(std::memory_order_acquire) == ticket;
  }
  // Waits until every operation issued so far has run.
  Status drain();
  // Collectives only, which every rank calls alike (point-to-point calls are not counted): the
  // number in their messages' stamps (collectives/call_stamp.h), labels and flight records.
  uint64_t nextCollective() { return collectives_++; }
  // Phases of sends and receives, numbered apart for their labels.
  uint64_t nextPointToPointGroup() { return pointToPointGroups_++; }
  // Completed calls and their traffic (weftCommGetStats); src/enqueue/count.h files them.
  TrafficStats& stats() { return stats_; }

  // Errors. The first one sticks: the communicator is unusable afterwards, and its links are
  // closed so the peers find out at once instead of at their timeout. fail() returns whether
  // `status` was the first.
  Status usable() const;
  bool fail(const Status& status);
  // A remote error as the first failure's farewell tells it, where a peer left one: a peer
  // seen gone some other way than by its link (a single-copy read of a process that exited)
  // may have failed because of a third rank. Other errors, and remote ones with no farewell
  // come, are returned as they are.
  Status withFarewell(const Status& status);
  void abort();
  const AbortFlag* abortFlag() const { return &abort_; }
  bool aborted() const { return abort_.load(); }
  weftResult_t asyncError() const;
  // Asks the transports whether these peers are still there.
  Status checkPeers(const std::vector<int>& peers);
  // Whether any two ranks of the communicator meet over the network, from data every rank holds
  // alike.
  bool anyNet() const { return anyNet_; }
  // Connects tcp links of their own to `peers` (for a window's puts, src/comm/remote_puts.h),
  // authenticated as the communicator's. Collective: every rank calls it, with the peers it
  // shares no memory with (maybe none).
  Status connectExtraLinks(const std::vector<int>& peers,
                           std::vector<std::unique_ptr<Link>>* links);

  void setLastError(const std::string& message);
  std::string lastError() const;

  void markFinalized() { state_.store(State::kFinalized); }

 private:
  Status connectTransports(const UniqueIdData& id, const SockAddr& localAddress);
  // What every transport's connect needs of this communicator (its rank, id, secret, tcp
  // address, a fresh deadline and the bootstrap's all-gather), the transports' own settings
  // left at their defaults.
  TransportContext transportContext();
  void setUpDirect();
  void placeRanks();
  // The network transport (WEFT_NET, "auto" made the same on every rank: UCX where every rank
  // has it and an RDMA device, else tcp) into net_.
  Status chooseNet();
  // Measures the links for the cost model: one ring through every rank where they are all of
  // one kind, else rings inside the hosts and one through their leaders.
  Status calibrate(bool anyNet, bool anyShm, bool netWithin);
  // Leaves every peer the farewell (transports/link.h) of a failure with `status`.
  void sayFarewell(const Status& status);
  void closeLinks();

  const int rank_;
  const int nranks_;
  const CommConfig config_;
  TrafficStats stats_;  // before the channels and operations that count into it
  FlightRecorder recorder_;
  std::atomic<uint64_t> tag_{0};
  std::unique_ptr<Bootstrap> bootstrap_;
  std::vector<std::unique_ptr<Link>> links_;  // by rank; null for self
  Doorbell* ownBell_ = nullptr;               // this rank's, where it has shm peers
  std::vector<const Doorbell*> peerBells_;    // its shm peers' (sharesCpuWithPeer)
  std::atomic<bool> warnedStacked_{false};    // sharesCpuWithPeer has said so once
  std::vector<Channel> channels_;
  std::vector<Channel*> channelPtrs_;
  LinkModel linkModel_;
  LinkModel intraHostModel_;
  LinkModel interHostModel_;
  std::vector<int> ringOrder_;
  HostGroups hostGroups_;
  bool oversubscribed_ = false;
  bool socketPeers_ = false;
  bool anyNet_ = false;
  std::array<uint8_t, 16> secret_{};  // the unique id's, which every connection presents
  SockAddr netAddress_;               // where this rank's tcp links listen (port 0)
  IdleWait idleWait_ = IdleWait::kSpin;
  std::string net_ = "tcp";  // the network transport: tcp or ucx
  AlgoOverride algoOverride_;
  SingleCopyLimits singleCopyLimits_;
  std::vector<char> scratch_;
  std::vector<char> inPlaceStage_;
  ExecutorCache executors_;
  std::vector<std::pair<ExecutorKey, uint64_t>> loggedShapes_;  // firstOfShape's
  std::vector<SlotArea> slotAreas_;  // every rank's window as the collectives lay it out
  std::unique_ptr<DirectGroup> direct_;
  DirectOp directOp_;
  StagedOp stagedOp_;

  std::atomic<State> state_{State::kInitializing};
  std::thread initThread_;
  AbortFlag abort_{false};
  std::atomic<uint64_t> nextTicket_{0};
  std::atomic<uint64_t> doneTicket_{0};
  uint64_t pointToPointGroups_ = 0;
  uint64_t collectives_ = 0;

  std::atomic<bool> failed_{false};  // error_ is set: the fast check of usable()
  mutable std::mutex errorMutex_;
  Status error_;
  std::string lastError_;
  std::mutex linksMutex_;
};

}  // namespace weft
