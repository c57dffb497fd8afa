#include "src/comm/calibration.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "collectives/executor.h"
#include "src/base/log.h"
#include "src/base/wait.h"
#include "src/comm/communicator.h"
#include "transports/link_wait.h"

namespace weft {
namespace {

constexpr int kLatencyRounds = 32;
constexpr int kBandwidthRounds = 4;
constexpr size_t kBandwidthBytes = size_t{1} << 20;

// Runs `rounds` hops of `bytes` round `ring` (which holds this rank); *seconds is the time per
// hop.
Status runRing(Communicator& comm, const std::vector<int>& ring, std::vector<char>& buffer,
               int rounds, double* seconds) {
  const size_t bytes = buffer.size();
  const int n = static_cast<int>(ring.size());
  const int pos = static_cast<int>(std::find(ring.begin(), ring.end(), comm.rank()) - ring.begin());
  const int next = ring[(pos + 1) % n];
  const int prev = ring[(pos + n - 1) % n];
  Schedule s;
  // Sending from the buffer the last receive filled makes every hop wait for the one before.
  for (int i = 0; i < rounds; ++i) {
    s.send(next, Ref{kRecvBuf, 0}, bytes);
    s.recv(prev, Ref{kRecvBuf, 0}, bytes);
  }
  Executor executor;
  WEFT_RETURN_IF_ERROR(
      executor.start(s, {BufferView{}, BufferView{buffer.data(), bytes, 1}, BufferView{}}, nullptr,
                     comm.channels(), comm.nranks()));
  // Waits as the runner does, so the figures are what collectives will see.
  LinkWait wait;
  std::vector<std::pair<Link*, bool>> io;
  Status failure;
  auto step = [&] {
    bool progressed = false;
    Status st = executor.progress(&progressed);
    if (!st.ok() && failure.ok()) failure = st;
    return progressed || !st.ok();
  };
  Deadline deadline = Deadline::after(comm.config().timeoutMs);
  auto start = Clock::now();
  Backoff idle = Backoff::forProgress(comm.idleWait());
  while (!executor.done() && failure.ok()) {
    if (step()) {
      idle.reset();
      continue;
    }
    if (deadline.expired()) return Status(weftTimeout, "timed out measuring the links");
    if (!idle.sleeping()) {
      idle.pause();
      continue;
    }
    io.clear();
    for (const auto& [peer, forRead] : executor.pendingIo())
      io.emplace_back(comm.link(peer), forRead);
    if (wait.wait(io, step)) idle.reset();
  }
  WEFT_RETURN_IF_ERROR(failure);
  *seconds = std::chrono::duration<double>(Clock::now() - start).count() / rounds;
  return okStatus();
}

// Seconds per hop of `bytes`: the fastest of a few timed passes after an untimed one. The first
// trips through the links and their wake-ups are slower than the rest, and on a loaded machine
// one descheduled pass would otherwise price the links for the communicator's whole life.
Status timeRing(Communicator& comm, const std::vector<int>& ring, size_t bytes, int rounds,
                double* seconds) {
  constexpr int kTimedPasses = 3;
  // Not zeros: those may be left to the kernel's zero page, to fault in while timed.
  std::vector<char> buffer(bytes, 1);
  double pass = 0;
  WEFT_RETURN_IF_ERROR(runRing(comm, ring, buffer, rounds, &pass));
  for (int i = 0; i < kTimedPasses; ++i) {
    WEFT_RETURN_IF_ERROR(runRing(comm, ring, buffer, rounds, &pass));
    *seconds = i == 0 ? pass : std::min(*seconds, pass);
  }
  return okStatus();
}

}  // namespace

Status calibrateRings(Communicator& comm, const std::vector<std::vector<int>>& rings,
                      const LinkModel& base, LinkModel* out) {
  *out = base;
  double small = 0;
  double large = 0;
  for (const std::vector<int>& ring : rings) {
    if (ring.size() < 2 || std::find(ring.begin(), ring.end(), comm.rank()) == ring.end()) {
      continue;
    }
    WEFT_RETURN_IF_ERROR(timeRing(comm, ring, 8, kLatencyRounds, &small));
    WEFT_RETURN_IF_ERROR(timeRing(comm, ring, kBandwidthBytes, kBandwidthRounds, &large));
  }
  double figures[2] = {small, large};
  Blob mine(sizeof(figures));
  memcpy(mine.data(), figures, sizeof(figures));
  std::vector<Blob> all;
  WEFT_RETURN_IF_ERROR(comm.bootstrap().allGather(mine, &all));
  for (const Blob& b : all) {
    if (b.size() != sizeof(figures)) return Status(weftInternalError, "bad calibration message");
    double theirs[2];
    memcpy(theirs, b.data(), sizeof(theirs));
    small = std::max(small, theirs[0]);
    large = std::max(large, theirs[1]);
  }
  if (large <= 0) return okStatus();  // no ring of two ranks or more
  out->latencyUs = small * 1e6;
  // The large hop pays one latency too; what is left moves the bytes. A latency pass slowed by
  // the scheduler could leave almost nothing, so the bytes are given at least half the hop.
  const double moving = std::max(large - small, large / 2);
  out->bandwidthGBps = static_cast<double>(kBandwidthBytes) / moving / 1e9;
  return okStatus();
}

}  // namespace weft
