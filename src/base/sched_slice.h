// Short scheduler slices for threads in a call that waits long. A rank that blocks while its
// peers work is woken when they give it something to do; where compute threads keep its CPU
// busy, the kernel lets it run at once only if its slice is shorter than theirs (EEVDF's custom
// slices, Linux 6.12 and later: sched_attr.sched_runtime of a SCHED_OTHER thread), and a yield
// sets a thread back by its own slice. Otherwise it waits for the compute thread's slice to end,
// at every hand-off. Its share of the CPU is unchanged. (src/enqueue/runner.cc says when.)
#pragma once

#include <cstdint>

namespace weft {

// While it lives, this thread has the slice WEFT_WAIT_SLICE_US asks for (0: no change); then
// the slice it had. Only SCHED_OTHER threads with a longer slice are changed, their nice level
// and other flags kept; a kernel without custom slices is left alone after the first try.
class ShortSlice {
 public:
  ShortSlice();
  ~ShortSlice();
  ShortSlice(const ShortSlice&) = delete;
  ShortSlice& operator=(const ShortSlice&) = delete;

 private:
  uint64_t restoreNs_ = 0;  // the slice to go back to; 0: nothing was changed
};

}  // namespace weft
