#include "src/comm/registered_window.h"

#include <unistd.h>

#include <chrono>
#include <cstring>

#include "collectives/datatype.h"
#include "src/base/log.h"
#include "src/base/wait.h"
#include "src/comm/communicator.h"

namespace weft {
namespace {

constexpr auto kPeerCheckInterval = std::chrono::milliseconds(100);

size_t signalBytes(int nranks) {
  return static_cast<size_t>(nranks) * RegisteredWindow::kSignals * sizeof(uint64_t);
}

// Signals by rank, kSignals each: the index of rank's signal sigIdx in a block, or in taken_.
size_t signalIndex(int rank, int sigIdx) {
  return static_cast<size_t>(rank) * RegisteredWindow::kSignals + static_cast<size_t>(sigIdx);
}

}  // namespace

RegisteredWindow::RegisteredWindow(Communicator& comm, void* base) : comm_(comm), base_(base) {}

RegisteredWindow::~RegisteredWindow() {
  remote_.reset();  // its thread raises signals_ until it stops
  if (signals_ != nullptr) (void)freeShareable(signals_);
}

Status RegisteredWindow::create(Communicator& comm, void* base, size_t bytes,
                                RegisteredWindow** window, Part* out) {
  auto w = std::unique_ptr<RegisteredWindow>(new RegisteredWindow(comm, base));
  bool mapped = false;  // some peer maps this part
  for (int r = 0; r < comm.nranks(); ++r)
    mapped = mapped || (r != comm.rank() && w->sharesMemoryWith(r));
  Part mine;
  std::memset(static_cast<void*>(&mine), 0, sizeof(mine));  // padding too: it travels to peers
  mine.pid = static_cast<int32_t>(getpid());
  mine.bytes = bytes;
  if (bytes > 0 && base == nullptr) return Status(weftInvalidArgument, "buff is NULL");
  if (bytes > 0 && mapped && !findShareable(base, bytes, &mine.buffer)) {
    return Status(weftInvalidArgument,
                  "the buffer does not lie in one weftMemAlloc allocation (peers on this host map "
                  "windows in place, so they must be shareable memory)");
  }
  WEFT_RETURN_IF_ERROR(allocateShareable(signalBytes(comm.nranks()), &w->signals_));
  if (!findShareable(w->signals_, signalBytes(comm.nranks()), &mine.signals)) {
    return Status(weftInternalError, "a window's signals are not shareable memory");
  }
  w->taken_.assign(static_cast<size_t>(comm.nranks()) * kSignals, 0);
  *out = mine;
  *window = w.release();
  return okStatus();
}

Status RegisteredWindow::open(const std::vector<Part>& parts) {
  const int n = comm_.nranks();
  if (parts.size() != static_cast<size_t>(n)) {
    return errorf(weftInternalError, "%zu window parts for %d ranks", parts.size(), n);
  }
  peerBase_.assign(static_cast<size_t>(n), nullptr);
  peerBytes_.assign(static_cast<size_t>(n), 0);
  peerSignals_.assign(static_cast<size_t>(n), nullptr);
  // First, since every rank must take part, even one whose mappings below fail.
  WEFT_RETURN_IF_ERROR(connectRemotePeers(parts));
  mappings_.beginCall();  // every mapping below stays for the window's life
  for (int r = 0; r < n; ++r) {
    const Part& p = parts[static_cast<size_t>(r)];
    peerBytes_[r] = p.bytes;
    if (r == comm_.rank()) {
      peerBase_[r] = static_cast<char*>(base_);
      peerSignals_[r] = static_cast<char*>(signals_);
      continue;
    }
    if (!sharesMemoryWith(r)) continue;
    if (p.bytes > 0) {
      WEFT_RETURN_IF_ERROR(mappings_.map(p.pid, p.buffer, p.bytes, {0, 0}, &peerBase_[r])
                               .withContext(strprintf("mapping rank %d's part", r)));
    }
    WEFT_RETURN_IF_ERROR(
        mappings_.map(p.pid, p.signals, signalBytes(n), {0, signalBytes(n)}, &peerSignals_[r])
            .withContext(strprintf("mapping rank %d's signals", r)));
  }
  int mapped = 0;
  for (int r = 0; r < n; ++r)
    mapped += r != comm_.rank() && peerSignals_[r] != nullptr ? 1 : 0;
  WEFT_INFO(kInit, "%s: window of %llu bytes: mapped by %d peer(s) on this host, over tcp to %d",
            comm_.describe().c_str(), static_cast<unsigned long long>(parts[comm_.rank()].bytes),
            mapped, n - 1 - mapped);
  return okStatus();
}

bool RegisteredWindow::sharesMemoryWith(int peer) const {
  const Link* link = comm_.link(peer);
  return link != nullptr && link->peerWindow() != nullptr;
}

Status RegisteredWindow::connectRemotePeers(const std::vector<Part>& parts) {
  if (!comm_.anyNet()) return okStatus();  // no rank has such peers: nobody connects
  std::vector<int> peers;
  std::vector<PutTarget> targets;
  for (int r = 0; r < comm_.nranks(); ++r) {
    if (r == comm_.rank() || sharesMemoryWith(r)) continue;
    peers.push_back(r);
    targets.push_back(PutTarget{static_cast<char*>(base_), parts[comm_.rank()].bytes,
                                signalIn(static_cast<char*>(signals_), r, 0), kSignals});
  }
  std::vector<std::unique_ptr<Link>> links;
  WEFT_RETURN_IF_ERROR(comm_.connectExtraLinks(peers, &links));
  if (peers.empty()) return okStatus();
  return RemotePuts::start(std::move(links), peers, targets, comm_.abortFlag(), &remote_);
}

Status RegisteredWindow::finishRemotePuts() {
  if (remote_ == nullptr) return okStatus();
  return remote_->finish(comm_.config().timeoutMs);
}

std::atomic<uint64_t>* RegisteredWindow::signalIn(char* block, int from, int sigIdx) {
  return reinterpret_cast<std::atomic<uint64_t>*>(block) + signalIndex(from, sigIdx);
}

Status RegisteredWindow::checkPut(const void* from, size_t count, weftDataType_t type, int peer,
                                  size_t offset, int sigIdx, size_t* bytes) const {
  if (!validType(type)) {
    return errorf(weftInvalidArgument, "unknown data type %d", static_cast<int>(type));
  }
  if (__builtin_mul_overflow(count, typeSize(type), bytes)) {
    return errorf(weftInvalidArgument, "count %zu is too large", count);
  }
  WEFT_RETURN_IF_ERROR(checkSignal(peer, sigIdx));
  const size_t size = peerBytes_[peer];
  if (offset > size || *bytes > size - offset) {
    return errorf(weftInvalidArgument,
                  "%zu bytes at offset %zu do not fit rank %d's part of the window (%zu bytes)",
                  *bytes, offset, peer, size);
  }
  if (*bytes > 0 && from == nullptr) return Status(weftInvalidArgument, "localbuff is NULL");
  return okStatus();
}

Status RegisteredWindow::putInTurn(const void* from, size_t bytes, int peer, size_t offset,
                                   int sigIdx) {
  WEFT_RETURN_IF_ERROR(comm_.usable());
  if (peerSignals_[peer] == nullptr) {
    return remote_->put(peer, from, bytes, offset, sigIdx, comm_.config().timeoutMs);
  }
  if (bytes > 0) std::memmove(peerBase_[peer] + offset, from, bytes);
  signalIn(peerSignals_[peer], comm_.rank(), sigIdx)->fetch_add(1, std::memory_order_release);
  return okStatus();
}

Status RegisteredWindow::checkSignal(int peer, int sigIdx) const {
  const int n = comm_.nranks();
  if (peer < 0 || peer >= n) {
    return errorf(weftInvalidArgument, "peer %d is out of range (communicator of %d ranks)", peer,
                  n);
  }
  if (sigIdx < 0 || sigIdx >= kSignals) {
    return errorf(weftInvalidArgument, "sigIdx %d is out of range (0 to %d)", sigIdx, kSignals - 1);
  }
  return okStatus();
}

Status RegisteredWindow::checkWaits(const std::vector<SignalWait>& waits) const {
  for (const SignalWait& w : waits) {
    WEFT_RETURN_IF_ERROR(checkSignal(w.peer, w.sigIdx));
    if (w.count < 0) return errorf(weftInvalidArgument, "opCnt %d is negative", w.count);
  }
  return okStatus();
}

Status RegisteredWindow::waitInTurn(const std::vector<SignalWait>& waits) {
  for (const SignalWait& w : waits)
    WEFT_RETURN_IF_ERROR(waitOne(w));
  return okStatus();
}

Status RegisteredWindow::waitOne(const SignalWait& w) {
  uint64_t& taken = taken_[signalIndex(w.peer, w.sigIdx)];
  const uint64_t want = taken + static_cast<uint64_t>(w.count);
  const std::atomic<uint64_t>* signal = signalIn(static_cast<char*>(signals_), w.peer, w.sigIdx);
  const int64_t timeoutMs = comm_.config().timeoutMs;
  Deadline deadline = Deadline::after(timeoutMs);
  Backoff backoff = Backoff::forProgress(comm_.idleWait());
  auto lastCheck = Clock::now();
  // Signals from peers across hosts rise in the window's thread, which wakes the wait.
  const bool remote = remote_ != nullptr && remote_->reaches(w.peer);
  uint64_t moves = remote ? remote_->moves() : 0;
  uint64_t seen = signal->load(std::memory_order_acquire);
  const auto context = [&] {
    return strprintf("waiting for signal %d from rank %d (%llu of %d puts arrived)", w.sigIdx,
                     w.peer, static_cast<unsigned long long>(seen - taken), w.count);
  };
  while (seen < want) {
    WEFT_RETURN_IF_ERROR(comm_.usable().withContext(context()));
    if (remote) WEFT_RETURN_IF_ERROR(remote_->failure(w.peer).withContext(context()));
    const auto now = Clock::now();
    if (now - lastCheck > kPeerCheckInterval) {
      lastCheck = now;
      WEFT_RETURN_IF_ERROR(comm_.checkPeers({w.peer}).withContext(context()));
    }
    if (deadline.expired()) {
      return errorf(weftTimeout, "timed out after %.1f s without a put: %s",
                    static_cast<double>(timeoutMs) / 1000.0, context().c_str());
    }
    if (remote) {
      remote_->awaitMove(&moves, kPeerCheckInterval);
    } else {
      backoff.pause();
    }
    const uint64_t now2 = signal->load(std::memory_order_acquire);
    if (now2 != seen) {  // progress: the timeout counts from here
      seen = now2;
      deadline = Deadline::after(timeoutMs);
      backoff.reset();
    }
  }
  taken = want;
  return okStatus();
}

}  // namespace weft
