#include "collectives/slot_area.h"

#include <algorithm>
#include <new>

namespace weft {

std::array<size_t, kWindowRegions> slotWindowRegions(size_t slotBytes, size_t stagingBytes) {
  return {slotBytes, slotBytes, stagingBytes};
}

void formatSlotWindow(const Window& window) {
  new (window.control) SlotControl();
}

SlotArea slotAreaOf(const Window& window) {
  SlotArea a;
  a.control = std::launder(reinterpret_cast<SlotControl*>(window.control));
  a.slots[0] = window.regions[0];
  a.slots[1] = window.regions[1];
  a.slotBytes = std::min(window.regionBytes[0], window.regionBytes[1]);
  a.staging = window.regions[2];
  a.stagingBytes = window.regionBytes[2];
  a.doorbell = window.doorbell;
  a.owner = window.owner;
  return a;
}

}  // namespace weft
