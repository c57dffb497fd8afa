#include "src/base/sched_slice.h"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "src/base/env.h"
#include "src/base/log.h"

namespace weft {
namespace {

// The kernel's struct sched_attr (include/uapi/linux/sched/types.h); glibc 2.36 has no wrapper.
struct SchedAttr {
  uint32_t size;
  uint32_t policy;
  uint64_t flags;
  int32_t nice;
  uint32_t priority;
  uint64_t runtime;  // SCHED_OTHER: the slice in ns (setting 0 asks for the default)
  uint64_t deadline;
  uint64_t period;
  uint32_t utilMin;
  uint32_t utilMax;
};

constexpr uint64_t kResetOnFork = 0x01;  // SCHED_FLAG_RESET_ON_FORK, linux/sched.h

bool getAttr(SchedAttr* attr) {
  *attr = {};
  return syscall(SYS_sched_getattr, 0, attr, sizeof *attr, 0) == 0;
}

bool setSlice(SchedAttr attr, uint64_t sliceNs) {
  attr.size = sizeof attr;
  attr.flags &= kResetOnFork;  // the only flag of a SCHED_OTHER thread to keep
  attr.runtime = sliceNs;
  return syscall(SYS_sched_setattr, 0, &attr, 0) == 0;
}

thread_local bool tUnsupported = false;  // this kernel or thread takes no custom slice

}  // namespace

ShortSlice::ShortSlice() {
  const int64_t wantUs = env().waitSliceUs;
  if (wantUs <= 0 || tUnsupported) return;
  const uint64_t want = static_cast<uint64_t>(wantUs) * 1000;
  SchedAttr attr;
  // Kernels before custom slices report no runtime for SCHED_OTHER threads.
  if (!getAttr(&attr) || attr.policy != SCHED_OTHER || attr.runtime == 0) {
    tUnsupported = true;
    return;
  }
  if (attr.runtime <= want) return;
  if (!setSlice(attr, want)) {
    WEFT_INFO(kInit, "no short scheduler slice while waiting (WEFT_WAIT_SLICE_US): %s",
              strerror(errno));
    tUnsupported = true;
    return;
  }
  restoreNs_ = attr.runtime;
}

ShortSlice::~ShortSlice() {
  if (restoreNs_ == 0) return;
  SchedAttr attr;
  if (getAttr(&attr)) (void)setSlice(attr, restoreNs_);
}

}  // namespace weft
