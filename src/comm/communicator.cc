#include "src/comm/communicator.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <mutex>

#include "src/base/env.h"
#include "src/base/log.h"
#include "src/base/wait.h"
#include "src/comm/agreed_settings.h"
#include "src/comm/calibration.h"
#include "src/comm/rank_placement.h"
#include "topology/ibverbs.h"
#include "transports/shm/shm_transport.h"
#include "transports/tcp/tcp_transport.h"
#if WEFT_HAVE_UCX
#include "transports/ucx/ucx_transport.h"
#endif

namespace weft {
namespace {

// Starting points for the cost model until it is calibrated by measurement.
constexpr LinkModel kShmModel{1.0, 8.0, 10.0};
constexpr LinkModel kTcpModel{20.0, 2.0, 10.0};

// The CPUs this process may run on: its affinity mask, else every online CPU.
cpu_set_t usableCpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return set;
  CPU_ZERO(&set);
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  for (long c = 0; c < online && c < CPU_SETSIZE; ++c)
    CPU_SET(static_cast<int>(c), &set);
  return set;
}

// WEFT_SOCKET_IFNAME or WEFT_SOCKET_FAMILY: the user chose the interfaces tcp uses.
bool userNamedInterfaces() {
  return !env().socketIfname.empty() || !env().socketFamily.empty();
}

Status chooseLocalAddress(const SockAddr& root, SockAddr* out) {
  if (userNamedInterfaces()) {
    NetInterface ni;
    WEFT_RETURN_IF_ERROR(defaultInterface(&ni));
    *out = ni.address;
    out->setPort(0);
    return okStatus();
  }
  // The interface that reaches the root reaches the other ranks too.
  return localAddressFor(root, out);
}

}  // namespace

Communicator::Communicator(int rank, int nranks, CommConfig config)
    : rank_(rank),
      nranks_(nranks),
      config_(std::move(config)),
      recorder_(static_cast<size_t>(env().traceBuffer)) {
  directOp_.countInto(stats_.current());
  stagedOp_.countInto(stats_.current());
}

Communicator::~Communicator() {
  if (initThread_.joinable()) initThread_.join();
  closeLinks();
}

std::string Communicator::describe() const {
  std::string s = strprintf("rank %d of %d", rank_, nranks_);
  if (!config_.name.empty()) s += " (" + config_.name + ")";
  return s;
}

AlgoParams Communicator::algoParams(size_t elemSize) const {
  AlgoParams p;
  p.chunkCount = std::max<size_t>(1, config_.chunkBytes / std::max<size_t>(1, elemSize));
  return p;
}

Status Communicator::connect(const UniqueIdData& id) {
  setLogRank(rank_);
  tag_.store(id.commTag, std::memory_order_relaxed);
  SockAddr local;
  Status s = chooseLocalAddress(id.root.toSockAddr(), &local);
  if (s.ok()) s = connectTransports(id, local);
  if (!s.ok()) {
    s = s.withContext(strprintf("rank %d of %d could not join the communicator", rank_, nranks_));
    fail(s);
    if (bootstrap_) bootstrap_->shutdown();  // neighbours waiting on us give up at once
    return s;
  }
  stats_.discardCurrent();
  state_.store(State::kReady);
  return okStatus();
}

Status Communicator::connectTransports(const UniqueIdData& id, const SockAddr& localAddress) {
  Bootstrap::Options bo;
  WEFT_RETURN_IF_ERROR(localLocality(&bo.locality));
  bo.rank = rank_;
  bo.nranks = nranks_;
  bo.localAddress = localAddress;
  bo.timeoutMs = config_.timeoutMs;
  bo.abort = &abort_;
  WEFT_RETURN_IF_ERROR(Bootstrap::create(id, bo, &bootstrap_));
  std::vector<Blob> settings;
  WEFT_RETURN_IF_ERROR(bootstrap_->allGather(encodeSettings(config_), &settings)
                           .withContext("comparing the ranks' settings"));
  WEFT_RETURN_IF_ERROR(checkSettingsAgree(settings));
  // Parsed once the ranks agree, so that a bad value fails every rank alike, not one rank while
  // the others wait for it at the bootstrap.
  WEFT_RETURN_IF_ERROR(AlgoOverride::parse(config_.algo, &algoOverride_));
  // "never" leaves the band empty: nothing waits for a decider.
  WEFT_RETURN_IF_ERROR(SingleCopyLimits::parse(
      config_.shmSingleCopyColls, config_.shmSingleCopy == "never" ? 0 : config_.shmSingleCopyBytes,
      config_.shmSingleCopyMaxBytes, config_.shmSingleCopyMaxRanks, &singleCopyLimits_));

  const auto& ranks = bootstrap_->ranks();
  placeRanks();
  std::vector<int> shmPeers;
  std::vector<int> netPeers;  // over the network transport (WEFT_NET)
  for (int r = 0; r < nranks_; ++r) {
    if (r == rank_) continue;
    bool sameHost = ranks[r].hostHash == ranks[rank_].hostHash;
    (sameHost && config_.transport != "tcp" ? shmPeers : netPeers).push_back(r);
  }
  // What kinds of link the communicator has, from data every rank holds alike (the agreed
  // settings and the bootstrap's table of hosts): a rank's own peers would not do, since on
  // hosts of different sizes some ranks have shm peers and others none.
  const bool manyHosts = hostGroups_.hosts.size() > 1;
  const bool netWithin = config_.transport == "tcp";
  bool sharedHost = false;
  for (const std::vector<int>& members : hostGroups_.hosts)
    sharedHost = sharedHost || members.size() > 1;
  const bool anyNet = manyHosts || netWithin;
  const bool anyShm = sharedHost && !netWithin;
  if (anyNet) WEFT_RETURN_IF_ERROR(chooseNet());
  const topo::System* system = nullptr;
  WEFT_RETURN_IF_ERROR(localSystem(&system));
  const topo::NicChoice nic = rankNic(*system, ranks, rank_);
  anyNet_ = anyNet;
  secret_ = id.secret;
  // Across hosts, tcp leaves by the NIC the topology puts closest to this rank, unless the
  // user named interfaces; ranks that meet over loopback stay on it.
  netAddress_ = manyHosts && !userNamedInterfaces() && !localAddress.isLoopback()
                    ? nicListenAddress(nic, localAddress)
                    : localAddress;
  // The port is the kernel's choice, made when tcp binds (its own line gives it).
  WEFT_INFO(kInit, "%s: NIC %s (%.2f GB/s) closest to NUMA node %d; tcp listens on %s",
            describe().c_str(), nic.interface.empty() ? "none" : nic.interface.c_str(),
            nic.bandwidthGBps, topo::unpackLocality(ranks[rank_].locality).numaNode,
            netAddress_.hostString().c_str());
  TransportContext ctx = transportContext();
  ctx.nSocketsPerPeer = config_.nSocketsPerPeer;
  ctx.socketPaceBytes = config_.socketPaceBytes;
  ctx.shmRingBytes = config_.shmRingBytes;
  ctx.shmWindowRegions = slotWindowRegions(config_.shmSlotBytes, config_.shmStagingBytes);
  ctx.formatWindow = formatSlotWindow;
  std::vector<std::unique_ptr<Link>> shmLinks;
  std::vector<std::unique_ptr<Link>> netLinks;
  WEFT_RETURN_IF_ERROR(shm::connect(ctx, shmPeers, &shmLinks).withContext("shm transport"));
#if WEFT_HAVE_UCX
  if (net_ == "ucx") {
    WEFT_RETURN_IF_ERROR(ucx::connect(ctx, netPeers, &netLinks).withContext("ucx transport"));
  }
#endif
  if (net_ == "tcp") {
    WEFT_RETURN_IF_ERROR(tcp::connect(ctx, netPeers, &netLinks).withContext("tcp transport"));
  }

  {
    std::lock_guard<std::mutex> lock(linksMutex_);  // abort() may close them from another thread
    links_.resize(static_cast<size_t>(nranks_));
    for (size_t i = 0; i < shmPeers.size(); ++i)
      links_[shmPeers[i]] = std::move(shmLinks[i]);
    for (size_t i = 0; i < netPeers.size(); ++i)
      links_[netPeers[i]] = std::move(netLinks[i]);
  }
  channels_.resize(static_cast<size_t>(nranks_));
  channelPtrs_.assign(static_cast<size_t>(nranks_), nullptr);
  for (int r = 0; r < nranks_; ++r) {
    if (!links_[r]) continue;
    channels_[r] = Channel(links_[r].get(), id.commTag, rank_, r, stats_.current());
    channelPtrs_[r] = &channels_[r];
  }
  linkModel_ = anyNet ? kTcpModel : kShmModel;
  intraHostModel_ = netWithin ? kTcpModel : kShmModel;
  interHostModel_ = kTcpModel;
  setUpDirect();
  // Every rank must have connected before any uses its links; the all-gather that waits for
  // that also tells each rank's NIC bandwidth, so that all price the links between hosts alike,
  // and the CPUs each may run on.
  const cpu_set_t cpus = usableCpus();
  Blob mine(sizeof(double) + sizeof(cpus));
  memcpy(mine.data(), &nic.bandwidthGBps, sizeof(double));
  memcpy(mine.data() + sizeof(double), &cpus, sizeof(cpus));
  std::vector<Blob> theirs;
  WEFT_RETURN_IF_ERROR(
      bootstrap_->allGather(mine, &theirs).withContext("waiting for all ranks to connect"));
  std::vector<double> nicGBps;
  // Oversubscribed: this host's ranks outnumber the CPUs they may run on together (ranks bound
  // to a core each are not; ranks bound to one core are).
  size_t localRanks = 0;
  cpu_set_t hostCpus;
  CPU_ZERO(&hostCpus);
  for (int r = 0; r < nranks_; ++r) {
    const Blob& w = theirs[r];
    if (w.size() != mine.size()) return Status(weftInternalError, "bad connect message");
    double gbps = 0;
    cpu_set_t theirCpus;
    memcpy(&gbps, w.data(), sizeof(double));
    memcpy(&theirCpus, w.data() + sizeof(double), sizeof(theirCpus));
    nicGBps.push_back(gbps);
    if (ranks[r].hostHash != ranks[rank_].hostHash) continue;
    ++localRanks;
    CPU_OR(&hostCpus, &hostCpus, &theirCpus);
  }
  oversubscribed_ = localRanks > static_cast<size_t>(CPU_COUNT(&hostCpus));
  socketPeers_ = !netPeers.empty();
  const std::string& wait = env().wait;
  idleWait_ = wait == "spin"    ? IdleWait::kSpin
              : wait == "yield" ? IdleWait::kYield
              : wait == "block" ? IdleWait::kBlock
              : oversubscribed_ ? IdleWait::kBlock
              : socketPeers_    ? IdleWait::kYield
                                : IdleWait::kSpin;
  for (const std::unique_ptr<Link>& link : links_) {
    if (link == nullptr) continue;
    if (ownBell_ == nullptr) ownBell_ = link->doorbell();
    if (const Doorbell* bell = link->peerDoorbell()) peerBells_.push_back(bell);
  }
  if (config_.calibrate) WEFT_RETURN_IF_ERROR(calibrate(anyNet, anyShm, netWithin));
  if (manyHosts) {
    // A NIC bounds what its links can do, whatever a measurement over loopback found.
    interHostModel_ = capByNics(interHostModel_, nicGBps);
    linkModel_ = capByNics(linkModel_, nicGBps);
    WEFT_INFO(kInit, "%s: links between hosts priced at %.3f GB/s (%s, capped by the NICs)",
              describe().c_str(), interHostModel_.bandwidthGBps,
              config_.calibrate ? "measured" : "tcp's built-in figure");
  }
  WEFT_INFO(kInit, "%s ready: shm to %zu peers, %s to %zu peers, host %s; idle waits %s",
            describe().c_str(), shmPeers.size(), net_.c_str(), netPeers.size(),
            ranks[rank_].hostname, idleWaitName(idleWait()));
  return okStatus();
}

TransportContext Communicator::transportContext() {
  TransportContext ctx;
  ctx.rank = rank_;
  ctx.nranks = nranks_;
  ctx.commTag = tag();
  ctx.secret = secret_;
  ctx.deadline = Deadline::after(config_.timeoutMs);
  ctx.abort = &abort_;
  ctx.localAddress = netAddress_;
  ctx.allGather = [this](const Blob& mine, std::vector<Blob>* all) {
    return bootstrap_->allGather(mine, all);
  };
  return ctx;
}

Status Communicator::connectExtraLinks(const std::vector<int>& peers,
                                       std::vector<std::unique_ptr<Link>>* links) {
  return tcp::connect(transportContext(), peers, links).withContext("tcp links for a window");
}

Status Communicator::chooseNet() {
#if WEFT_HAVE_UCX
  constexpr bool kUcxBuilt = true;
#else
  constexpr bool kUcxBuilt = false;
#endif
  const bool rdma = kUcxBuilt && config_.net == "auto" && !topo::listVerbsDevices().empty();
  const Blob mine = {static_cast<uint8_t>((kUcxBuilt ? 1 : 0) | (rdma ? 2 : 0))};
  std::vector<Blob> all;
  WEFT_RETURN_IF_ERROR(bootstrap_->allGather(mine, &all).withContext("choosing the network"));
  bool everyRdma = true;
  for (int r = 0; r < nranks_; ++r) {
    const uint8_t theirs = all[r].size() == 1 ? all[r][0] : 0;
    everyRdma = everyRdma && (theirs & 2) != 0;
    if (config_.net == "ucx" && (theirs & 1) == 0) {
      return errorf(weftInvalidUsage, "WEFT_NET=ucx, but rank %d's Weft was built without UCX", r);
    }
  }
  net_ = config_.net == "auto" ? (everyRdma ? "ucx" : "tcp") : config_.net;
  WEFT_INFO(kInit, "%s: links between hosts over %s (WEFT_NET=%s)", describe().c_str(),
            net_.c_str(), config_.net.c_str());
  return okStatus();
}

Status Communicator::calibrate(bool anyNet, bool anyShm, bool netWithin) {
  auto report = [this](const char* which, const LinkModel& m) {
    WEFT_INFO(kInit, "%s: measured links%s: %.2f us latency, %.2f GB/s", describe().c_str(), which,
              m.latencyUs, m.bandwidthGBps);
  };
  if (!(anyNet && anyShm)) {
    // Links of one kind: one ring through every rank.
    LinkModel measured;
    WEFT_RETURN_IF_ERROR(calibrateRings(*this, {ringOrder_}, linkModel_, &measured)
                             .withContext("measuring the links"));
    report("", measured);
    linkModel_ = measured;
    (anyNet ? interHostModel_ : intraHostModel_) = measured;
    if (netWithin) intraHostModel_ = measured;
    return okStatus();
  }
  // Both kinds: rings inside the hosts at once, then one through the hosts' leaders. The slowest
  // link between hosts prices every flat schedule, which crosses it.
  WEFT_RETURN_IF_ERROR(calibrateRings(*this, hostGroups_.hosts, intraHostModel_, &intraHostModel_)
                           .withContext("measuring the links within hosts"));
  std::vector<int> leaders;
  for (const std::vector<int>& members : hostGroups_.hosts)
    leaders.push_back(members.front());
  WEFT_RETURN_IF_ERROR(calibrateRings(*this, {leaders}, interHostModel_, &interHostModel_)
                           .withContext("measuring the links between hosts"));
  report(" within hosts", intraHostModel_);
  report(" between hosts", interHostModel_);
  linkModel_ = interHostModel_;
  return okStatus();
}

void Communicator::placeRanks() {
  RankPlacement p = weft::placeRanks(bootstrap_->ranks());
  ringOrder_ = std::move(p.ringOrder);
  hostGroups_ = std::move(p.hostGroups);
  if (logEnabled(LogLevel::kInfo, kInit)) {
    std::string order;
    for (int r : ringOrder_)
      order += " " + std::to_string(r);
    WEFT_INFO(kInit, "%s: ring order%s over %zu host(s)", describe().c_str(), order.c_str(),
              hostGroups_.hosts.size());
  }
}

void Communicator::setUpDirect() {
  if (nranks_ < 2) return;
  std::vector<SlotArea> slotAreas(static_cast<size_t>(nranks_));
  for (int r = 0; r < nranks_; ++r) {
    if (r == rank_) continue;
    const Link* l = links_[r].get();
    if (l == nullptr || l->peerWindow() == nullptr) return;  // some peer shares no memory
    slotAreas[r] = slotAreaOf(*l->peerWindow());
    slotAreas[rank_] = slotAreaOf(*l->ownWindow());
  }
  slotAreas_ = std::move(slotAreas);
  std::vector<const SlotArea*> areas;
  for (const SlotArea& a : slotAreas_)
    areas.push_back(&a);
  direct_ = std::make_unique<DirectGroup>(rank_, std::move(areas));
  using Mode = TimedChoice::Mode;
  const Mode stores =
      TimedChoice::parse(config_.shmStageStores, "cached", "streamed").value_or(Mode::kAuto);
  for (CollKind kind : {CollKind::kAllReduce, CollKind::kReduce, CollKind::kReduceScatter,
                        CollKind::kAllGather, CollKind::kBroadcast, CollKind::kAllToAll}) {
    direct_->stagingStores(kind) = TimedChoice(
        stores, std::string("staged ") + collName(kind) + "'s stores", "ordinary", "non-temporal");
  }
  direct_->setStagingStoresMode(stores);
  for (CollKind kind : {CollKind::kAllGather, CollKind::kBroadcast, CollKind::kAllToAll}) {
    direct_->singleCopyChoice(kind) =
        TimedChoice(config_.shmSingleCopy == "always" ? Mode::kSecond : Mode::kAuto,
                    std::string(collName(kind)) + " in the single-copy band", "staged",
                    "single copy", kSingleCopyTrial);
  }
}

void Communicator::connectInBackground(const UniqueIdData& id) {
  initThread_ = std::thread([this, id] {
    Status ignored = connect(id);  // the outcome is kept in state_ and error_
    (void)ignored;
  });
}

Status Communicator::waitUntilReady() {
  Backoff backoff;
  while (state_.load() == State::kInitializing)
    backoff.pause();
  return usable();
}

bool Communicator::sharesCpuWithPeer() {
  const int cpu = sched_getcpu();
  if (cpu < 0) return false;
  if (ownBell_ != nullptr) ownBell_->cpu.store(cpu, std::memory_order_relaxed);
  for (const Doorbell* bell : peerBells_) {
    if (bell->cpu.load(std::memory_order_relaxed) != cpu) continue;
    if (!warnedStacked_.exchange(true, std::memory_order_relaxed)) {
      WEFT_WARN(kInit,
                "%s: a peer on this host waits on CPU %d too, where the ranks could each have "
                "one: waits yield to it instead of spinning, but the two take turns on one CPU; "
                "bind the ranks to cores of their own (weft-run does by default)",
                describe().c_str(), cpu);
    }
    return true;
  }
  return false;
}

char* Communicator::scratch(size_t bytes) {
  if (scratch_.size() < bytes) scratch_.resize(bytes);
  return scratch_.data();
}

bool Communicator::firstOfShape(const ExecutorKey& key, uint64_t how) {
  constexpr size_t kShapes = 128;  // then forgotten all at once: the log repeats, never grows
  for (const auto& [k, h] : loggedShapes_) {
    if (k == key && h == how) return false;
  }
  if (loggedShapes_.size() == kShapes) loggedShapes_.clear();
  loggedShapes_.emplace_back(key, how);
  return true;
}

char* Communicator::inPlaceStage(size_t bytes) {
  if (inPlaceStage_.size() < bytes) inPlaceStage_.resize(bytes);
  return inPlaceStage_.data();
}

Status Communicator::waitForTurn(uint64_t ticket) {
  if (isTurn(ticket)) return okStatus();
  Backoff backoff;
  Deadline deadline = Deadline::after(config_.timeoutMs);
  while (!isTurn(ticket)) {
    WEFT_RETURN_IF_ERROR(usable());
    if (deadline.expired()) {
      return errorf(weftTimeout, "%s: timed out waiting for earlier operations to finish",
                    describe().c_str());
    }
    backoff.pause();
  }
  return okStatus();
}

Status Communicator::drain() {
  uint64_t last = nextTicket_.load();
  Backoff backoff;
  Deadline deadline = Deadline::after(config_.timeoutMs);
  while (doneTicket_.load(std::memory_order_acquire) < last) {
    if (deadline.expired()) {
      return errorf(weftTimeout, "%s: timed out waiting for queued operations", describe().c_str());
    }
    backoff.pause();
  }
  return usable();
}

Status Communicator::usable() const {
  if (abort_.load()) return abortedStatus().withContext(describe());
  if (!failed_.load(std::memory_order_acquire) && state_.load() != State::kFinalized) {
    return okStatus();
  }
  std::lock_guard<std::mutex> lock(errorMutex_);
  if (!error_.ok()) {
    return Status(error_.code(), describe() + " failed earlier: " + error_.message());
  }
  if (state_.load() == State::kFinalized) {
    return Status(weftInvalidUsage, describe() + " was finalized");
  }
  return okStatus();
}

bool Communicator::fail(const Status& status) {
  {
    std::lock_guard<std::mutex> lock(errorMutex_);
    if (!error_.ok()) return false;
    error_ = status;
    failed_.store(true, std::memory_order_release);
  }
  WEFT_WARN(kInit, "%s: %s", describe().c_str(), status.message().c_str());
  if (state_.load() == State::kInitializing) state_.store(State::kFailed);
  // direct_ is set before state_ turns ready, and not changed after.
  if (state_.load() == State::kReady && direct_) direct_->markFailed();
  sayFarewell(status);
  closeLinks();
  return true;
}

Status Communicator::withFarewell(const Status& status) {
  if (status.code() != weftRemoteError) return status;
  std::lock_guard<std::mutex> lock(linksMutex_);
  for (size_t peer = 0; peer < links_.size(); ++peer) {
    if (!links_[peer]) continue;
    Farewell theirs = links_[peer]->receivedFarewell();
    if (theirs.origin >= 0) return farewellError(static_cast<int>(peer), theirs, status);
  }
  return status;
}

void Communicator::sayFarewell(const Status& status) {
  std::lock_guard<std::mutex> lock(linksMutex_);
  // Passed on where a peer's farewell came first: the failure began there.
  Farewell why{rank_, aborted() ? describe() + " called weftCommAbort" : status.message()};
  for (auto& l : links_) {
    if (!l) continue;
    Farewell theirs = l->receivedFarewell();
    if (theirs.origin >= 0) {
      why = std::move(theirs);
      break;
    }
  }
  for (auto& l : links_) {
    if (l) l->sayFarewell(why);
  }
}

void Communicator::abort() {
  // While init runs, its thread owns the bootstrap; it sees the flag and stops by itself.
  bool initializing = state_.load() == State::kInitializing;
  abort_.store(true);
  fail(abortedStatus());
  if (!initializing && bootstrap_) bootstrap_->shutdown();
}

weftResult_t Communicator::asyncError() const {
  if (state_.load() == State::kInitializing) return weftInProgress;
  std::lock_guard<std::mutex> lock(errorMutex_);
  return error_.code();
}

Status Communicator::checkPeers(const std::vector<int>& peers) {
  for (int p : peers) {
    if (p >= 0 && p < nranks_ && links_.size() == static_cast<size_t>(nranks_) && links_[p]) {
      WEFT_RETURN_IF_ERROR(links_[p]->checkPeer().withContext(strprintf("rank %d", p)));
    }
  }
  return okStatus();
}

void Communicator::closeLinks() {
  std::lock_guard<std::mutex> lock(linksMutex_);
  for (auto& l : links_) {
    if (l) l->close();
  }
}

void Communicator::setLastError(const std::string& message) {
  std::lock_guard<std::mutex> lock(errorMutex_);
  lastError_ = message;
}

std::string Communicator::lastError() const {
  std::lock_guard<std::mutex> lock(errorMutex_);
  return lastError_;
}

}  // namespace weft
