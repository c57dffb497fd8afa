// Window: the memory face of the shared-memory transport (DESIGN.md, decision 11). Each rank owns
// one window that the peers on its host map as well: a control area (zero bytes, or what
// TransportContext::formatWindow puts there before any peer connects), data regions of the sizes
// the communicator asked for, and the owner's doorbell. The transport sizes, maps and checks
// windows and says whether the owner may read its peers' memory besides (process_vm_readv,
// transports/cross_memory.h); what lives inside is its user's layout (collectives/slot_area.h).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "transports/doorbell.h"

namespace weft {

constexpr size_t kWindowRegions = 3;
// The control area, on cache lines of its own: what a window's user keeps its flags in.
constexpr size_t kWindowControlBytes = 2048;

// Who owns a window, written by the owner before its peers connect (readsPeers once it has).
struct WindowOwner {
  int32_t pid = 0;
  // Where this word sits in the owner's address space, holding its own address: what a peer
  // reads through the kernel to learn whether it may read the owner's memory.
  uint64_t selfAddress = 0;
  // 1 if the owner may read the memory of every peer it connected to over shared memory.
  std::atomic<uint32_t> readsPeers{0};
};

struct Window {
  char* control = nullptr;  // kWindowControlBytes
  std::array<char*, kWindowRegions> regions{};
  std::array<size_t, kWindowRegions> regionBytes{};  // whole pages each
  const WindowOwner* owner = nullptr;
  Doorbell* doorbell = nullptr;  // the owner's: ring it after writing what the owner waits for
};

}  // namespace weft
