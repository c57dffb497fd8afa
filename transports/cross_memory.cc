#include "transports/cross_memory.h"

#include <sys/uio.h>

#include <cerrno>
#include <cstring>

namespace weft {
namespace {

// The kernel takes the other process's addresses as pointers; this one never dereferences them.
iovec remoteRange(uint64_t address, size_t bytes) {
  // NOLINTNEXTLINE(performance-no-int-to-ptr)
  void* base = reinterpret_cast<void*>(static_cast<uintptr_t>(address));
  return iovec{base, bytes};
}

}  // namespace

uint64_t addressOf(const void* p) {
  return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p));
}

Status readProcessMemory(pid_t pid, void* to, uint64_t from, size_t bytes) {
  auto* dst = static_cast<char*>(to);
  size_t done = 0;
  while (done < bytes) {
    iovec local{dst + done, bytes - done};
    iovec remote = remoteRange(from + done, bytes - done);
    ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (n > 0) {
      done += static_cast<size_t>(n);  // a short read stops at a fault; the next call reports it
      continue;
    }
    const int err = n == 0 ? EFAULT : errno;
    if (err == EINTR) continue;
    if (err == ESRCH) return errorf(weftRemoteError, "process %d exited", static_cast<int>(pid));
    if (err == EFAULT) {
      return errorf(weftInvalidUsage,
                    "process %d has no readable memory at 0x%llx + %zu (a buffer shorter than "
                    "the count says?)",
                    static_cast<int>(pid), static_cast<unsigned long long>(from) + done,
                    bytes - done);
    }
    return systemError(
        strprintf("reading %zu bytes of process %d", bytes - done, static_cast<int>(pid)).c_str(),
        err);
  }
  return okStatus();
}

int probeProcessMemory(pid_t pid, uint64_t remote, uint64_t expected) {
  uint64_t value = 0;
  iovec local{&value, sizeof(value)};
  iovec from = remoteRange(remote, sizeof(value));
  if (process_vm_readv(pid, &local, 1, &from, 1, 0) != static_cast<ssize_t>(sizeof(value))) {
    return errno != 0 ? errno : EFAULT;
  }
  return value == expected ? 0 : EFAULT;
}

}  // namespace weft
