// SlotArea: the collectives' layout of a rank's shared-memory window (transports/window.h): two
// slots (alternating by operation), the flags that say what they hold, and a staging area.
// Collectives on small buffers go through the slots directly (collectives/direct.h) instead of
// messages: a rank copies its part into its slot, posts the operation's sequence number, and
// reads its peers' slots. Larger ones pass chunk by chunk through the staging areas
// (collectives/staged.h).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "transports/window.h"

namespace weft {

// Data this small travels in the flag's own cache line, so a reader takes one line, not two.
constexpr size_t kInlineSlotBytes = 48;

struct alignas(64) SlotPost {
  // The operation whose data the slot holds (0: none yet), written last.
  std::atomic<uint64_t> sequence;
  // What the poster meant to do (collective, sizes, type...), so ranks that disagree find out.
  std::atomic<uint64_t> signature;
  char inlineData[kInlineSlotBytes];
};
static_assert(sizeof(SlotPost) == 64);

// The most ranks a group of mapped or single-copy collectives may have: a signal counter each.
constexpr int kMaxSignalRanks = 128;

// The flags in the window's control area, constructed there by its owner before any peer maps
// it (formatSlotWindow).
struct SlotControl {
  SlotPost posted[2];
  // Staged collectives: how many chunks this rank has staged, combined and drained since the
  // communicator began (all ranks go through the same chunks), in that order.
  alignas(64) std::atomic<uint64_t> chunksDone[3];
  // 2-rank staged calls: the counters that time a round trip between the ranks' cores
  // (collectives/core_probe.h), by the operation's slot parity, each on a line of its own.
  struct alignas(64) ProbeLine {
    std::atomic<uint64_t> value;
  };
  ProbeLine probe[2];
  // Mapped and single-copy collectives (collectives/mapped_schedule.h): the latest signal each
  // rank has raised to this one (MappedFace), by that rank, each written by that rank alone.
  alignas(64) std::atomic<uint64_t> signals[kMaxSignalRanks];
  // Set when the owner's communicator fails or is aborted, before the error reaches its caller:
  // from then on the buffers it posted may be freed, so a peer that finds one unreadable
  // reports the owner's failure, not a buffer shorter than the count.
  alignas(64) std::atomic<uint32_t> failed;
};
static_assert(sizeof(SlotControl) <= kWindowControlBytes);
static_assert(std::is_standard_layout_v<SlotControl> &&
              std::is_trivially_destructible_v<SlotControl>);

struct SlotArea {
  SlotControl* control = nullptr;
  char* slots[2] = {nullptr, nullptr};
  size_t slotBytes = 0;
  // Where the rank stages chunks of larger collectives (collectives/staged.h).
  char* staging = nullptr;
  size_t stagingBytes = 0;
  Doorbell* doorbell = nullptr;        // the owner's: ring it after posting
  const WindowOwner* owner = nullptr;  // its process, and whether it may read its peers
};

// The window regions a rank asks for: its two slots of slotBytes, then its staging area.
std::array<size_t, kWindowRegions> slotWindowRegions(size_t slotBytes, size_t stagingBytes);
// Constructs the flags in a rank's own window: TransportContext::formatWindow.
void formatSlotWindow(const Window& window);
// The layout of a window asked for so and formatted.
SlotArea slotAreaOf(const Window& window);

}  // namespace weft
