// RegisteredWindow: memory that every rank of a communicator lends its peers
// (weftCommWindowRegister), and the one-sided calls on it (weftPutSignal, weftWaitSignal),
// host-side. Each rank lends its part and kSignals counters per peer, which that peer bumps after
// its puts into the part, and which the rank waits on; a wait sees the data of every put whose
// signal it saw. Peers that share memory with the rank (shm links) map its part, which must be
// weftMemAlloc memory then: a put is a copy into the mapped part and a release increment of the
// signal. Peers that do not (across hosts, or WEFT_TRANSPORT=tcp) put over tcp links of the
// window's own, which a thread of the window moves (src/comm/remote_puts.h).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "src/base/status.h"
#include "src/comm/remote_puts.h"
#include "transports/shareable_memory.h"
#include "weft/weft.h"

namespace weft {

class Communicator;

class RegisteredWindow {
 public:
  static constexpr int kSignals = 8;  // per peer: sigIdx 0..7

  // What a rank publishes of its part to its peers.
  struct Part {
    int32_t pid = 0;
    uint32_t reserved = 0;
    uint64_t bytes = 0;
    MemoryRef buffer;
    MemoryRef signals;
  };

  ~RegisteredWindow();
  RegisteredWindow(const RegisteredWindow&) = delete;
  RegisteredWindow& operator=(const RegisteredWindow&) = delete;

  // This rank's part: `bytes` at `base`, which must lie in weftMemAlloc memory. *out is what
  // the peers need, once all-gathered, for open().
  static Status create(Communicator& comm, void* base, size_t bytes, RegisteredWindow** window,
                       Part* out);
  // Maps the part and signals of every peer that shares memory with this rank, and connects to
  // the others, from what each published. Collective.
  Status open(const std::vector<Part>& parts);
  // For the deregistration, once every rank has reached it: the puts the peers across hosts made
  // before it have landed once this returns.
  Status finishRemotePuts();

  Communicator& comm() const { return comm_; }
  // The calls are checked when made, and run in a turn of the communicator (the caller's, or a
  // stream's: src/api/windows.cc), so they go in order with its other operations, and its
  // destruction waits for them.
  // A put of `count` elements of `type` from `from` to peer's part at `offset` bytes, which then
  // adds one to the peer's signal `sigIdx` from this rank: weftInvalidArgument naming what is
  // wrong with it, else *bytes is its size.
  Status checkPut(const void* from, size_t count, weftDataType_t type, int peer, size_t offset,
                  int sigIdx, size_t* bytes) const;
  Status putInTurn(const void* from, size_t bytes, int peer, size_t offset, int sigIdx);
  // Waits until each (peer, sigIdx, count)'s signal to this rank has risen `count` times since
  // the waits before took theirs; an error once WEFT_TIMEOUT passes without one rising, or a
  // peer waited for dies. Signals that arrived before an error stay taken.
  struct SignalWait {
    int peer;
    int sigIdx;
    int count;
  };
  Status checkWaits(const std::vector<SignalWait>& waits) const;
  Status waitInTurn(const std::vector<SignalWait>& waits);

 private:
  RegisteredWindow(Communicator& comm, void* base);
  Status checkSignal(int peer, int sigIdx) const;
  // Whether this rank and peer (not this rank) share memory: then peer maps this rank's part.
  bool sharesMemoryWith(int peer) const;
  Status connectRemotePeers(const std::vector<Part>& parts);
  Status waitOne(const SignalWait& w);
  // Where a signal block (this rank's or a peer's) keeps the signal sigIdx from rank `from`.
  static std::atomic<uint64_t>* signalIn(char* block, int from, int sigIdx);

  Communicator& comm_;
  void* base_;
  void* signals_ = nullptr;  // this rank's: kSignals per peer, shareable
  PeerMappings mappings_;
  std::vector<char*> peerBase_;         // each peer's part here (nullptr for this rank)
  std::vector<size_t> peerBytes_;       // its size
  std::vector<char*> peerSignals_;      // each peer's signals here
  std::vector<uint64_t> taken_;         // per peer and signal, what the waits have taken
  std::unique_ptr<RemotePuts> remote_;  // to and from the peers that map nothing; may be null
};

}  // namespace weft
