// LruCache: a few entries kept by key, the least recently used one dropped to make room. What
// keeps executors ready for the calls a communicator repeats (collectives/executor_cache.h,
// collectives/mapped_schedule.h): a training loop calls the same few collectives millions of
// times, so a linear search of a few slots is the cheapest lookup.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace weft {

template <typename Key, typename Entry, size_t kCapacity>
class LruCache {
 public:
  // nullptr when absent.
  Entry* find(const Key& key) {
    for (Slot& s : slots_) {
      if (s.key == key) {
        s.lastUse = ++clock_;
        return &s.entry;
      }
    }
    return nullptr;
  }

  // Adds an entry, dropping the least recently used one when full. The pointer holds until the
  // next insert.
  Entry* insert(const Key& key, Entry entry) {
    Slot* slot = nullptr;
    if (slots_.size() < kCapacity) {
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

 private:
  struct Slot {
    Key key;
    Entry entry;
    uint64_t lastUse = 0;
  };
  uint64_t clock_ = 0;
  std::vector<Slot> slots_;
};

}  // namespace weft
