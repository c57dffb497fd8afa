// MemoryFace: what the executor needs of the transports' memory face (DESIGN.md, decision 11) to
// run a schedule's memory steps (collectives/schedule.h): the peers' buffers of this call, and
// signals between ranks. The shared-memory path implements it over mapped weftMemAlloc buffers,
// or over peers' plain buffers that the kernel reads (process_vm_readv), and the windows' signal
// counters (collectives/mapped_schedule.h); the simulator over the virtual ranks' own buffers.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "collectives/schedule.h"
#include "src/base/status.h"

namespace weft {

struct PeerBuffer {
  char* base = nullptr;  // mapped here; nullptr: not
  size_t bytes = 0;
  // Where only the kernel reaches it (gets only): its address in process pid; 0: nowhere.
  uint64_t remote = 0;
  pid_t pid = 0;
};

class MemoryFace {
 public:
  virtual ~MemoryFace() = default;
  // Rank `peer`'s buffer `buf` for this call.
  virtual PeerBuffer buffer(int peer, BufId buf) = 0;
  // Raises this rank's signal to `peer`, after everything this rank wrote before it (release).
  virtual void signal(int peer) = 0;
  // Takes `peer`'s next signal to this rank if the peer has raised it (acquire): one wait takes
  // one signal, in order.
  virtual bool takeSignal(int peer) = 0;
  // Whether `peer` has said that it failed: the buffers it gave may be gone.
  virtual bool peerFailed(int /*peer*/) { return false; }

  // `bytes` of the peer's buffer from byte `at`, as an address here: weftInternalError where
  // the buffer is out of reach (or only the kernel's) or too short.
  Status reach(int peer, BufId buf, size_t at, size_t bytes, char** out);
  // Copies `bytes` of the peer's buffer from byte `at` to `to` (non-temporal stores where
  // `stream` and the copy is this process's own).
  Status get(int peer, BufId buf, size_t at, void* to, size_t bytes, bool stream);
};

}  // namespace weft
