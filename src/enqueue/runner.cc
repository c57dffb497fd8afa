#include "src/enqueue/runner.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <span>

#include "collectives/datatype.h"
#include "src/base/log.h"
#include "src/base/sched_slice.h"
#include "src/base/wait.h"
#include "src/comm/communicator.h"
#include "src/enqueue/count.h"
#include "src/enqueue/plan.h"
#include "src/enqueue/record.h"
#include "src/enqueue/trace_dump.h"
#include "transports/link.h"
#include "transports/link_wait.h"

namespace weft {
namespace {

constexpr auto kPeerCheckInterval = std::chrono::milliseconds(100);
// A wait past its spinning that lasts this long (a tenth of a default scheduler slice) asks for
// short slices (ShortSlice).
constexpr auto kLongWait = std::chrono::microseconds(100);
thread_local bool tLastCallWaitedLong = false;  // a wait of this thread's last call did

struct Active {
  CommWork* work = nullptr;
  // The collectives to run, in order: work's list, or runCollective's one op.
  std::span<const Op> collectives;
  size_t nextCollective = 0;
  bool p2pPlanned = false;
  bool running = false;
  bool finished = false;
  Phase phase;
  // Clock reads are kept off the busy path: passes only note that something moved, and the
  // idle checks turn that into a time.
  bool moved = false;
  Clock::time_point lastProgress;
  bool spun = false;  // runCollective's shortcut spun on it already
};

// Marks the communicator failed by `what`'s error, and returns the error as reported. A call
// ended by a local abort says so, not what the abort did to its links. The first error of the
// communicator dumps its flight recorder (WEFT_TRACE_DUMP), and its message says where.
Status failComm(Communicator& comm, const std::string& what, const Status& s) {
  Status full = (comm.aborted() ? abortedStatus() : comm.withFarewell(s))
                    .withContext(comm.describe() + ": " + what);
  if (!comm.fail(full)) return full;
  const std::string path = dumpTrace(comm, "error", full);
  return path.empty() ? full : Status(full.code(), full.message() + " (trace: " + path + ")");
}

// A group's sends and receives, for the P2P trace: "send to rank 1 (8 x int32), recv from rank 1
// (8 x int32)".
std::string describePointToPoint(const std::vector<Op>& ops) {
  std::string out;
  for (const Op& op : ops) {
    const bool send = op.kind == OpKind::kSend;
    const std::string peer = op.anySource ? "any rank" : strprintf("rank %d", op.peer);
    out += strprintf("%s%s %s (%zu x %s)", out.empty() ? "" : ", ", send ? "send to" : "recv from",
                     peer.c_str(), op.count, typeName(op.type));
  }
  return out;
}

// The ops of the work's running phase: its collective, or its sends and receives.
std::span<const Op> phaseOps(const Active& a) {
  if (a.phase.label.pointToPoint) return a.work->p2p;
  return a.collectives.subspan(a.nextCollective - 1, 1);
}

// Plans and starts the work's next phase; marks it finished when nothing is left.
Status startNext(Active& a) {
  CommWork& w = *a.work;
  Communicator& comm = *w.comm;
  if (a.nextCollective < a.collectives.size()) {
    const Op& op = a.collectives[a.nextCollective++];
    Op staged;
    Status s = planCollective(comm, stageInPlace(comm, op, &staged), &a.phase);
    if (!s.ok()) {
      recordFailed(op, s);
      return s.withContext(a.phase.label.describe());
    }
    WEFT_TRACE(kColl, "%s", a.phase.label.describe().c_str());
  } else if (!w.p2p.empty() && !a.p2pPlanned) {
    a.p2pPlanned = true;
    Status s = planPointToPoint(comm, w.p2p, &a.phase);
    if (!s.ok()) {
      for (const Op& op : w.p2p)
        recordFailed(op, s);
      return s.withContext(a.phase.label.describe());
    }
    if (logEnabled(LogLevel::kTrace, kP2p)) {
      WEFT_TRACE(kP2p, "%s: %s", a.phase.label.describe().c_str(),
                 describePointToPoint(w.p2p).c_str());
    }
  } else {
    a.finished = true;
    return okStatus();
  }
  for (const Op& op : phaseOps(a))
    recordStarted(op, a.phase.label);
  a.running = true;
  a.moved = true;
  return okStatus();
}

// Whether the peers the work waits for are still there. A peer publishes what it sends before it
// closes its links, so one that went since the last pass may have left just what the work waited
// for: after one more pass, only a peer still waited for is a failure.
Status checkPendingPeers(Active& a) {
  Communicator& comm = *a.work->comm;
  Progressable& op = *a.phase.runnable;
  if (comm.checkPeers(op.pendingPeers()).ok()) return okStatus();
  bool progressed = false;
  WEFT_RETURN_IF_ERROR(op.progress(&progressed));
  if (progressed) a.moved = true;
  return comm.checkPeers(op.pendingPeers());
}

// Files the phase that just finished in the communicator's statistics and flight recorder.
void countFinished(const Active& a) {
  if (a.phase.label.pointToPoint) {
    countPointToPoint(*a.work->comm, a.work->p2p);
  } else {
    countCollective(*a.work->comm, a.collectives[a.nextCollective - 1]);
  }
  for (const Op& op : phaseOps(a))
    recordFinished(op);
}

// Checks made only while idle: abort, dead peers, and the timeout.
Status checkWhileIdle(Active& a) {
  Communicator& comm = *a.work->comm;
  if (comm.aborted()) return abortedStatus();
  WEFT_RETURN_IF_ERROR(checkPendingPeers(a));
  const int64_t timeoutMs = comm.config().timeoutMs;
  const auto now = Clock::now();
  if (a.moved) {
    a.lastProgress = now;
    a.moved = false;
  }
  auto idle = now - a.lastProgress;
  if (timeoutMs > 0 && idle > std::chrono::milliseconds(timeoutMs)) {
    const Traffic& moved = *comm.stats().current();
    return errorf(
        weftTimeout,
        "timed out after %.1f s without progress (the call had sent %llu bytes and "
        "received %llu); waiting: %s",
        static_cast<double>(timeoutMs) / 1000.0, static_cast<unsigned long long>(moved.sent),
        static_cast<unsigned long long>(moved.received), a.phase.runnable->describeWait().c_str());
  }
  return okStatus();
}

// What a blocked runner waits with. Per thread and reused, as runWorks's pool is, and made room
// for before any wait, so that how long a call waits does not decide whether it allocates.
struct WaitState {
  std::vector<std::pair<Link*, bool>> io;
  LinkWait links;

  void reserve(size_t n) {
    io.reserve(n);
    links.reserve(n);
  }
};

WaitState& threadWaitState() {
  thread_local WaitState state;
  return state;
}

// Drives the works: progress passes while anything moves, then spins and yields as the
// communicator's idleWait() says, and then a real wait: on the doorbell of a communicator whose
// peers are all on this host, on the sockets of tcp peers, or a short sleep.
class Runner {
 public:
  Runner(Active* active, size_t n) : active_(active, n) {
    if (n > 0) idleWait_ = active[0].work->comm->idleWait();
    size_t links = 0;  // a send and a receive per peer at most
    for (const Active& a : active_)
      links += 2 * static_cast<size_t>(a.work->comm->nranks());
    waitState_.reserve(links);
  }

  Status run() {
    for (Active& a : active_) {
      Communicator& comm = *a.work->comm;
      setLogRank(comm.rank());
      Status s = comm.waitForTurn(a.work->ticket);
      if (!s.ok()) failWith(a, s);
    }
    Backoff idle = Backoff::forProgress(idleWait_);
    if (active_.size() == 1 && active_[0].spun) idle.skipSpin();
    Clock::time_point lastCheck{};  // read from the clock only once done spinning
    Clock::time_point idleSince{};  // this wait's first yield
    for (;;) {
      bool progressed = pass();
      if (!anyLeft_) break;
      if (progressed) {
        idle.reset();
        idleSince = {};
        continue;
      }
      if (idle.spinning()) {
        // A group over several communicators asks the first: they mostly share their ranks.
        if (idle.atSpinCheck() && active_[0].work->comm->sharesCpuWithPeer()) idle.skipSpin();
        idle.pause();
        continue;
      }
      // Yielding, as well as blocking, watches the peers and the timeout: thousands of yields
      // among ranks that outnumber the cores can last seconds.
      const auto now = Clock::now();
      if (lastCheck == Clock::time_point{}) lastCheck = now;
      if (now - lastCheck > kPeerCheckInterval) {
        lastCheck = now;
        checkIdle();
      }
      // A wait this long means the peers wait for CPUs that something else holds: from here to
      // the end of the call, and from the first yield of the thread's next call, short turns
      // (ShortSlice). A yield then puts the thread behind the others by a short slice, and a
      // woken thread gets its CPU back at once. (Kept on for longer, it slowed ranks that only
      // take turns among themselves: docs/performance.md, "Collectives beside compute".)
      if (idleSince == Clock::time_point{}) idleSince = now;
      if (now - idleSince > kLongWait) longWait_ = true;
      if (!shortSlice_ && (longWait_ || tLastCallWaitedLong)) shortSlice_.emplace();
      if (!idle.sleeping()) {
        idle.pause();
      } else if (block()) {
        idle.reset();
        idleSince = {};
      }
    }
    for (Active& a : active_)
      a.work->comm->endTurn();
    tLastCallWaitedLong = longWait_;
    return first_;
  }

 private:
  // One progress pass over every work; true if anything moved.
  bool pass() {
    bool any = false;
    anyLeft_ = false;
    for (Active& a : active_) {
      if (a.finished) continue;
      if (!a.running) {
        Status s = startNext(a);
        if (!s.ok()) failWith(a, s);
        if (a.finished) continue;
      }
      anyLeft_ = true;
      bool progressed = false;
      Status s = a.phase.runnable->progress(&progressed);
      if (!s.ok()) {
        failWith(a, s);
        continue;
      }
      if (a.phase.runnable->done()) {
        a.phase.finish();
        countFinished(a);
        a.running = false;
        progressed = true;
      }
      if (progressed) {
        any = true;
        a.moved = true;
      }
    }
    return any;
  }

  // Waits for something to happen; true if a pass made progress meanwhile.
  bool block() {
    std::vector<std::pair<Link*, bool>>& io = waitState_.io;
    io.clear();
    for (Active& a : active_) {
      if (a.finished || !a.running) continue;
      Communicator& comm = *a.work->comm;
      for (const auto& [peer, forRead] : a.phase.runnable->pendingIo())
        io.emplace_back(comm.link(peer), forRead);
    }
    return waitState_.links.wait(io, [this] { return pass(); });
  }

  void checkIdle() {
    for (Active& a : active_) {
      if (a.finished || !a.running) continue;
      Status s = checkWhileIdle(a);
      if (!s.ok()) failWith(a, s);
    }
  }

  void failWith(Active& a, const Status& s) {
    if (a.running) {
      for (const Op& op : phaseOps(a))
        recordFailed(op, s);
    }
    Status full = failComm(*a.work->comm, a.running ? a.phase.label.describe() : "operation", s);
    a.finished = true;
    a.running = false;
    if (first_.ok()) first_ = full;
  }

  std::span<Active> active_;
  WaitState& waitState_ = threadWaitState();
  IdleWait idleWait_ = IdleWait::kSpin;
  bool anyLeft_ = true;
  Status first_;
  bool longWait_ = false;                 // a wait of this call lasted kLongWait
  std::optional<ShortSlice> shortSlice_;  // the thread's slice from then on, to the call's end
};

PhaseLabel directLabel(const Op& op, uint64_t sequence) {
  PhaseLabel label = collectiveLabel(op, sequence);
  label.path = PhaseLabel::Path::kDirect;
  return label;
}

// The latency path's shortcut for a direct collective (collectives/direct.h) that was started
// in its turn: spun on here, without a plan or a Runner, since its peers are mostly in the same
// call already. Returns false if it is still running once the spin is over; the Runner then
// takes it on, and yields, blocks, watches the peers and times out.
bool spinDirect(Communicator& comm, const Op& op, uint64_t sequence, Status* result) {
  DirectOp& direct = comm.directOp();
  Backoff idle = Backoff::forProgress(comm.idleWait());
  while (idle.spinning()) {
    bool progressed = false;
    Status s = direct.progress(&progressed);
    if (!s.ok() || direct.done()) {
      if (!s.ok()) {
        setLogRank(comm.rank());
        recordFailed(op, s);
        s = failComm(comm, directLabel(op, sequence).describe(), s);
      } else {
        countCollective(comm, op);
        recordFinished(op);
      }
      comm.endTurn();
      *result = s;
      return true;
    }
    if (progressed) {
      idle.reset();
    } else if (idle.atSpinCheck() && comm.sharesCpuWithPeer()) {
      return false;  // the Runner yields at once
    } else {
      idle.pause();
    }
  }
  return false;
}

}  // namespace

Status runWorks(std::vector<CommWork>& works) {
  if (works.size() == 1 && works[0].task) {
    CommWork& w = works[0];
    Status s = w.comm->waitForTurn(w.ticket);
    if (s.ok()) s = w.task();
    w.comm->endTurn();
    w.task = nullptr;  // what it holds goes now, not when the batch is reused
    return s;
  }
  // Per thread and reused, so a call allocates nothing for its bookkeeping; emptied when done so
  // no executor outlives its call.
  thread_local std::vector<Active> pool;
  const QuietCollLog quiet(std::all_of(
      works.begin(), works.end(), [](const CommWork& w) { return !w.comm->config().logCalls; }));
  pool.resize(works.size());
  for (size_t i = 0; i < works.size(); ++i) {
    pool[i].work = &works[i];
    pool[i].collectives = works[i].collectives;
  }
  Status s = Runner(pool.data(), pool.size()).run();
  pool.clear();
  return s;
}

// An average needs its division after it, and so takes no shortcut. An in-place all-to-all
// that is not this call's turn yet is staged by startNext once it is.
Status runCollective(const Op& call) {
  Communicator& comm = *call.comm;
  const QuietCollLog quiet(!comm.config().logCalls);
  CommWork work;
  work.comm = &comm;
  work.ticket = comm.takeTicket();
  const bool shortcut = call.redop != weftAvg && comm.isTurn(work.ticket);
  Op staged;
  const Op& op = shortcut ? stageInPlace(comm, call, &staged) : call;
  const bool direct = shortcut && startDirect(comm, op);
  uint64_t sequence = 0;
  if (direct) {
    sequence = comm.nextCollective();  // planCollective counts the others
    const PhaseLabel label = directLabel(op, sequence);
    recordStarted(op, label);
    if (logEnabled(LogLevel::kInfo, kColl)) {
      logPath(comm, op, label);
      setLogRank(comm.rank());
      WEFT_TRACE(kColl, "%s", label.describe().c_str());
    }
    Status s;
    if (spinDirect(comm, op, sequence, &s)) return s;
  }
  Active a;
  a.work = &work;
  a.collectives = {&op, 1};
  if (direct) {
    a.nextCollective = 1;
    a.running = true;
    a.moved = true;
    a.phase.runnable = &comm.directOp();
    a.phase.label = directLabel(op, sequence);
    a.spun = true;
  }
  return Runner(&a, 1).run();
}

}  // namespace weft
