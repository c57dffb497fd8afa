#include "collectives/executor_cache.h"

#include <algorithm>

namespace weft {

CachedExecutor* ExecutorCache::find(const ExecutorKey& key) {
  for (Slot& s : slots_) {
    if (s.key == key) {
      s.lastUse = ++clock_;
      return &s.entry;
    }
  }
  return nullptr;
}

CachedExecutor* ExecutorCache::insert(const ExecutorKey& key, CachedExecutor entry) {
  Slot* slot = nullptr;
  if (slots_.size() < capacity_) {
    slot = &slots_.emplace_back();
  } else {
    slot = &*std::min_element(slots_.begin(), slots_.end(),
                              [](const Slot& a, const Slot& b) { return a.lastUse < b.lastUse; });
  }
  slot->key = key;
  slot->entry = std::move(entry);
  slot->lastUse = ++clock_;
  return &slot->entry;
}

}  // namespace weft
