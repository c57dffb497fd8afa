// Peers' weftMemAlloc memory (transports/shm/shared_memory.h), mapped into this process. A
// mapping is kept for the next call that names the same allocation: mapping, and the page faults
// of a first touch, cost far more than the copies of a call. The pages a call uses are
// populated before it uses them, 2 MiB at a time and once each, so that no collective stalls on a
// page fault per 4 KiB in the middle of its copies; only those, since each page costs each process
// microseconds on some VMs (8 ranks that populated their peers' whole 64M buffers spent 8.5 s in
// their first all-reduce, whose shares need an eighth of that). A mapping goes when its owner's
// fd number turns up again with another allocation (the old one was freed), when a peer has too
// many (never one the current call uses), and with this object; until then it keeps the freed
// memory alive.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "src/base/status.h"
#include "transports/shm/shared_memory.h"
#include "transports/shm/shm_segment.h"

namespace weft::shm {

using weft::ByteRange;

class PeerMemory {
 public:
  // Where [offset, offset + bytes) of allocation `serial` of process `pid`, open there as fd,
  // lies in this process; the `used` bytes of it (from *out) are populated. Whatever the peer
  // said is checked against the allocation's first page: a wrong fd, serial or range gives
  // weftRemoteError, not a wild pointer.
  Status map(pid_t pid, int fd, uint64_t serial, uint64_t offset, size_t bytes, ByteRange used,
             char** out);

  // Starts a call: what map() returns from here on stays mapped until the next beginCall(), even
  // where the call names more than kPerProcess allocations of one process (thread ranks).
  void beginCall() { callStart_ = uses_ + 1; }

  // Mappings kept per peer process at most, unless one call needs more.
  static constexpr size_t kPerProcess = 32;

 private:
  struct Entry {
    pid_t pid;
    int fd;
    uint64_t serial;
    size_t bytes;
    uint64_t lastUse;
    std::unique_ptr<Mapping> mapping;
    std::vector<bool> populated;  // by kPopulateBytes
  };
  static constexpr size_t kPopulateBytes = kHugePageBytes;  // a huge page, where there are some
  static void populateRange(Entry& e, uint64_t offset, size_t bytes);
  Status open(pid_t pid, int fd, uint64_t serial, Entry* out) const;
  void evict(pid_t pid, int fd);

  std::vector<Entry> entries_;
  uint64_t uses_ = 0;
  uint64_t callStart_ = 1;  // entries used since then serve the current call
};

}  // namespace weft::shm
