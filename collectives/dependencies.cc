#include "collectives/dependencies.h"

#include <algorithm>
#include <iterator>
#include <map>

namespace weft {
namespace {

// Memory split into segments that were last written by one step and read by some since.
class AccessTracker {
 public:
  AccessTracker() { segments_.emplace(0, Segment{}); }

  void collect(const Footprint::Range& r, bool write, std::vector<uint32_t>* deps) {
    forSegments(r, [&](Segment& s) {
      if (s.writer >= 0) deps->push_back(static_cast<uint32_t>(s.writer));
      if (write) deps->insert(deps->end(), s.readers.begin(), s.readers.end());
    });
  }

  void recordRead(const Footprint::Range& r, uint32_t step) {
    forSegments(r, [&](Segment& s) { s.readers.push_back(step); });
  }

  // A write leaves one segment with no readers.
  void recordWrite(const Footprint::Range& r, uint32_t step) {
    if (r.begin >= r.end) return;
    auto first = splitAt(r.begin);
    auto last = splitAt(r.end);
    segments_.erase(std::next(first), last);
    first->second = Segment{static_cast<int64_t>(step), {}};
  }

 private:
  struct Segment {
    int64_t writer = -1;
    std::vector<uint32_t> readers;
  };
  using Map = std::map<uintptr_t, Segment>;  // segment start -> state, up to the next start

  Map::iterator splitAt(uintptr_t x) {
    auto it = std::prev(segments_.upper_bound(x));
    if (it->first == x) return it;
    return segments_.emplace_hint(std::next(it), x, it->second);
  }

  template <typename Fn>
  void forSegments(const Footprint::Range& r, Fn&& fn) {
    if (r.begin >= r.end) return;
    auto first = splitAt(r.begin);
    auto last = splitAt(r.end);
    for (auto it = first; it != last; ++it)
      fn(it->second);
  }

  Map segments_;
};

}  // namespace

void Dependencies::build(const std::vector<Footprint>& steps) {
  start_.assign(1, 0);
  list_.clear();
  AccessTracker tracker;
  int64_t fence = -1;
  std::vector<uint32_t> sinceFence;
  std::vector<uint32_t> deps;
  for (uint32_t i = 0; i < steps.size(); ++i) {
    const Footprint& f = steps[i];
    deps.clear();
    if (fence >= 0) deps.push_back(static_cast<uint32_t>(fence));
    if (f.fence) {
      deps.insert(deps.end(), sinceFence.begin(), sinceFence.end());
      fence = i;
      sinceFence.clear();
    } else {
      for (const auto& r : f.read)
        tracker.collect(r, false, &deps);
      tracker.collect(f.write, true, &deps);
      for (const auto& r : f.read)
        tracker.recordRead(r, i);
      tracker.recordWrite(f.write, i);
      sinceFence.push_back(i);
    }
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    list_.insert(list_.end(), deps.begin(), deps.end());
    start_.push_back(static_cast<uint32_t>(list_.size()));
  }
}

}  // namespace weft
