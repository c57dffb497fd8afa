#include "transports/shm/shared_memory.h"

#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <iterator>
#include <map>
#include <mutex>

#include "transports/cross_memory.h"

namespace weft::shm {
namespace {

struct Allocation {
  int fd;
  uint64_t serial;
  size_t bytes;  // the whole mapping, header page included
};

// Allocations by the address of their first byte after the header page.
struct Registry {
  std::mutex mutex;
  std::map<uint64_t, Allocation> byStart;
  uint64_t nextSerial = 1;
};

Registry& registry() {
  static auto* r = new Registry();  // never destroyed: frees may come during exit
  return *r;
}

}  // namespace

void adviseHugePages(void* base, size_t bytes) {
  // Best effort: without transparent huge pages in the kernel it fails, and 4 KiB pages serve.
  const size_t steps = bytes / kHugePageBytes * kHugePageBytes;
  if (steps > 0) (void)madvise(base, steps, MADV_HUGEPAGE);
}

Status allocateShared(size_t bytes, void** out) {
  *out = nullptr;
  const size_t page = kSharedHeaderBytes;
  if (bytes > SIZE_MAX - 2 * page) {
    return errorf(weftInvalidArgument, "cannot allocate %zu bytes of shared memory", bytes);
  }
  const size_t total = page + (std::max<size_t>(bytes, 1) + page - 1) / page * page;
  // A memfd of any size is created and mapped at once, its pages found missing only when
  // touched (SIGBUS): refuse what the host's memory and swap could never hold.
  struct sysinfo host {};
  if (sysinfo(&host) == 0) {
    const unsigned long long room =
        (static_cast<unsigned long long>(host.totalram) + host.totalswap) * host.mem_unit;
    if (total > room) {
      return errorf(weftSystemError,
                    "weftMemAlloc: %zu bytes is more than this host's memory and swap (%llu bytes)",
                    bytes, room);
    }
  }
  int fd = memfd_create("weft-mem", MFD_CLOEXEC);
  if (fd < 0) return systemError("weftMemAlloc: memfd_create", errno);
  if (ftruncate(fd, static_cast<off_t>(total)) != 0) {
    const int err = errno;
    close(fd);
    return systemError(strprintf("weftMemAlloc: sizing a memfd to %zu bytes", total).c_str(), err);
  }
  void* base = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    const int err = errno;
    close(fd);
    return systemError(strprintf("weftMemAlloc: mapping %zu bytes", total).c_str(), err);
  }
  adviseHugePages(base, total);
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto* header = static_cast<SharedHeader*>(base);
  *header = SharedHeader{kSharedMagic, r.nextSerial++, total};
  char* start = static_cast<char*>(base) + page;
  r.byStart.emplace(addressOf(start), Allocation{fd, header->serial, total});
  *out = start;
  return okStatus();
}

Status freeShared(void* p) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.byStart.find(addressOf(p));
  if (it == r.byStart.end()) {
    return errorf(weftInvalidArgument, "%p was not returned by weftMemAlloc (or was freed)", p);
  }
  munmap(static_cast<char*>(p) - kSharedHeaderBytes, it->second.bytes);
  close(it->second.fd);
  r.byStart.erase(it);
  return okStatus();
}

bool findShared(const void* p, size_t bytes, SharedRange* out) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.byStart.upper_bound(addressOf(p));
  if (it == r.byStart.begin()) return false;
  it = std::prev(it);
  const uint64_t start = it->first;
  const size_t usable = it->second.bytes - kSharedHeaderBytes;
  const uint64_t at = addressOf(p);
  if (at - start > usable || bytes > usable - (at - start)) return false;
  *out = SharedRange{it->second.fd, it->second.serial, kSharedHeaderBytes + (at - start)};
  return true;
}

}  // namespace weft::shm
