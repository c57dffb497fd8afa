#include "src/enqueue/runner.h"

#include <chrono>

#include "src/base/log.h"
#include "src/base/wait.h"
#include "src/comm/communicator.h"
#include "src/enqueue/plan.h"

namespace weft {
namespace {

constexpr auto kPeerCheckInterval = std::chrono::milliseconds(100);

struct Active {
  CommWork* work = nullptr;
  size_t nextCollective = 0;
  bool p2pPlanned = false;
  bool running = false;
  bool finished = false;
  Phase phase;
  Executor executor;
  Clock::time_point lastProgress;
};

// Plans and starts the work's next phase; marks it finished when nothing is left.
Status startNext(Active& a) {
  CommWork& w = *a.work;
  Communicator& comm = *w.comm;
  if (a.nextCollective < w.collectives.size()) {
    WEFT_RETURN_IF_ERROR(planCollective(comm, w.collectives[a.nextCollective++], &a.phase));
  } else if (!w.p2p.empty() && !a.p2pPlanned) {
    a.p2pPlanned = true;
    WEFT_RETURN_IF_ERROR(planPointToPoint(comm, w.p2p, &a.phase));
  } else {
    a.finished = true;
    return okStatus();
  }
  WEFT_RETURN_IF_ERROR(
      a.executor
          .start(a.phase.schedule, a.phase.buffers, a.phase.reduce, comm.channels(), comm.nranks())
          .withContext(a.phase.what));
  a.running = true;
  a.lastProgress = Clock::now();
  return okStatus();
}

// Checks made only while idle: abort, dead peers, and the timeout.
Status checkWhileIdle(Active& a) {
  Communicator& comm = *a.work->comm;
  if (comm.aborted()) return Status(weftInvalidUsage, "communicator was aborted");
  WEFT_RETURN_IF_ERROR(comm.checkPeers(a.executor.pendingPeers()));
  const int64_t timeoutMs = comm.config().timeoutMs;
  auto idle = Clock::now() - a.lastProgress;
  if (timeoutMs > 0 && idle > std::chrono::milliseconds(timeoutMs)) {
    return errorf(weftTimeout, "timed out after %.1f s without progress; waiting: %s",
                  static_cast<double>(timeoutMs) / 1000.0, a.executor.describeWait().c_str());
  }
  return okStatus();
}

}  // namespace

Status runWorks(std::vector<CommWork>& works) {
  std::vector<Active> active(works.size());
  Status first;
  auto failWith = [&first](Active& a, const Status& s) {
    Communicator& comm = *a.work->comm;
    std::string what = a.running ? a.phase.what : "operation";
    Status full = s.withContext(comm.describe() + ": " + what);
    comm.fail(full);
    a.finished = true;
    a.running = false;
    if (first.ok()) first = full;
  };
  for (size_t i = 0; i < works.size(); ++i) {
    active[i].work = &works[i];
    Communicator& comm = *works[i].comm;
    setLogRank(comm.rank());
    Status s = comm.waitForTurn(works[i].ticket);
    if (!s.ok()) failWith(active[i], s);
  }
  Backoff backoff;
  auto lastCheck = Clock::now();
  for (;;) {
    bool anyLeft = false;
    bool anyProgress = false;
    for (Active& a : active) {
      if (a.finished) continue;
      if (!a.running) {
        Status s = startNext(a);
        if (!s.ok()) failWith(a, s);
        if (a.finished) continue;
      }
      anyLeft = true;
      bool progressed = false;
      Status s = a.executor.progress(&progressed);
      if (!s.ok()) {
        failWith(a, s);
        continue;
      }
      if (a.executor.done()) {
        a.phase.finish();
        a.running = false;
        progressed = true;
      }
      if (progressed) {
        anyProgress = true;
        a.lastProgress = Clock::now();
      }
    }
    if (!anyLeft) break;
    if (anyProgress) {
      backoff.reset();
      continue;
    }
    backoff.pause();
    if (backoff.sleeping() && Clock::now() - lastCheck > kPeerCheckInterval) {
      lastCheck = Clock::now();
      for (Active& a : active) {
        if (a.finished || !a.running) continue;
        Status s = checkWhileIdle(a);
        if (!s.ok()) failWith(a, s);
      }
    }
  }
  for (CommWork& w : works)
    w.comm->endTurn();
  return first;
}

}  // namespace weft
