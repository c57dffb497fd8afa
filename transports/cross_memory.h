// Cross-memory attach: one copy from another process's memory on this host into this one's
// (process_vm_readv), for collectives that read their peers' buffers where they are. The kernel
// allows it where it would allow ptrace (the same user, and Yama's ptrace_scope 0 or
// CAP_SYS_PTRACE; seccomp may forbid the call): probe first, and fall back where it refuses.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "src/base/status.h"

namespace weft {

// Addresses in another process are integers here: they mean nothing in this one.
uint64_t addressOf(const void* p);

// Copies `bytes` from address `from` of process `pid` to `to`. A process that is gone gives
// weftRemoteError; an address range the process has not mapped gives weftInvalidUsage.
Status readProcessMemory(pid_t pid, void* to, uint64_t from, size_t bytes);

// Whether this process may read process `pid`'s memory: reads the 8 bytes at `remote` in it and
// compares them with `expected`. 0 if it may, else why not (an errno; EFAULT: other bytes).
int probeProcessMemory(pid_t pid, uint64_t remote, uint64_t expected);

}  // namespace weft
