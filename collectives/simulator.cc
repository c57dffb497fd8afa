#include "collectives/simulator.h"

#include <memory>

#include "transports/loopback/loopback_link.h"

namespace weft {

Status simulate(const std::vector<Schedule>& schedules,
                const std::vector<std::vector<BufferView>>& buffers, ReduceFn reduce,
                const SimOptions& options) {
  const int n = static_cast<int>(schedules.size());
  const auto un = static_cast<size_t>(n);
  // A link for every pair that talks.
  std::vector<std::vector<bool>> talks(un, std::vector<bool>(un, false));
  for (int r = 0; r < n; ++r) {
    for (const Step& s : schedules[r].steps) {
      if (s.peer >= 0 && s.peer < n && s.peer != r) {
        talks[r][s.peer] = true;
        talks[s.peer][r] = true;
      }
    }
  }
  std::vector<std::unique_ptr<Link>> links;
  std::vector<std::vector<Channel>> channels(un, std::vector<Channel>(un));
  std::vector<std::vector<Channel*>> channelPtrs(un, std::vector<Channel*>(un, nullptr));
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      if (!talks[a][b]) continue;
      auto [la, lb] = makeLoopbackPair(options.linkCapacity, options.paceBytes);
      channels[a][b] = Channel(la.get(), 1, a, b);
      channels[b][a] = Channel(lb.get(), 1, b, a);
      channelPtrs[a][b] = &channels[a][b];
      channelPtrs[b][a] = &channels[b][a];
      links.push_back(std::move(la));
      links.push_back(std::move(lb));
    }
  }
  std::vector<Executor> executors(un);
  for (int r = 0; r < n; ++r) {
    WEFT_RETURN_IF_ERROR(executors[r]
                             .start(schedules[r], buffers[r], reduce, channelPtrs[r].data(), n)
                             .withContext(strprintf("rank %d", r)));
  }
  for (;;) {
    bool anyProgress = false;
    bool allDone = true;
    for (int r = 0; r < n; ++r) {
      if (executors[r].done()) continue;
      bool progressed = false;
      WEFT_RETURN_IF_ERROR(executors[r].progress(&progressed).withContext(strprintf("rank %d", r)));
      anyProgress = anyProgress || progressed;
      allDone = allDone && executors[r].done();
    }
    if (allDone) return okStatus();
    if (!anyProgress) {
      std::string what;
      for (int r = 0; r < n; ++r) {
        if (!executors[r].done()) {
          what += strprintf("\n  rank %d waits: %s", r, executors[r].describeWait().c_str());
        }
      }
      return errorf(weftInternalError, "schedule deadlocks:%s", what.c_str());
    }
  }
}

}  // namespace weft
