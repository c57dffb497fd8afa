#include "transports/shm/peer_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "transports/shm/shared_memory.h"

namespace weft::shm {

Status PeerMemory::open(pid_t pid, int fd, uint64_t serial, Entry* out) const {
  const std::string path = strprintf("/proc/%d/fd/%d", static_cast<int>(pid), fd);
  // O_NONBLOCK: an fd that a confused peer named may be a FIFO, whose open would block.
  const int local = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NONBLOCK);
  if (local < 0) {
    return errorf(weftRemoteError, "cannot open %s, a peer's weftMemAlloc memory: %s", path.c_str(),
                  strerror(errno));
  }
  struct stat st {};
  SharedHeader header{};
  const bool named =
      fstat(local, &st) == 0 && S_ISREG(st.st_mode) &&
      pread(local, &header, sizeof(header), 0) == static_cast<ssize_t>(sizeof(header)) &&
      header.magic == kSharedMagic && header.serial == serial &&
      header.bytes == static_cast<uint64_t>(st.st_size);
  void* base = named ? mmap(nullptr, header.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, local, 0)
                     : MAP_FAILED;
  const int err = errno;
  ::close(local);  // the mapping keeps the memory
  if (!named) {
    return errorf(weftRemoteError,
                  "%s is not the weftMemAlloc allocation #%llu a peer named (freed meanwhile?)",
                  path.c_str(), static_cast<unsigned long long>(serial));
  }
  if (base == MAP_FAILED) {
    return systemError(strprintf("mapping %s", path.c_str()).c_str(), err);
  }
  adviseHugePages(base, header.bytes);
  *out = Entry{pid,
               fd,
               serial,
               header.bytes,
               0,
               std::make_unique<Mapping>(base, header.bytes),
               std::vector<bool>((header.bytes + kPopulateBytes - 1) / kPopulateBytes, false)};
  return okStatus();
}

void PeerMemory::populateRange(Entry& e, uint64_t offset, size_t bytes) {
  if (bytes == 0) return;
  for (size_t c = offset / kPopulateBytes; c <= (offset + bytes - 1) / kPopulateBytes; ++c) {
    if (e.populated[c]) continue;
    const size_t from = c * kPopulateBytes;
    populate(e.mapping->base() + from, std::min(kPopulateBytes, e.bytes - from));
    e.populated[c] = true;
  }
}

// Drops the peer's mappings of an fd it has reused (so the allocation they show was freed),
// and its least recently used one when it has too many, unless the current call uses them all.
void PeerMemory::evict(pid_t pid, int fd) {
  std::erase_if(entries_, [&](const Entry& e) { return e.pid == pid && e.fd == fd; });
  const auto held =
      std::count_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.pid == pid; });
  if (static_cast<size_t>(held) < kPerProcess) return;
  auto oldest = entries_.end();
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->pid == pid && it->lastUse < callStart_ &&
        (oldest == entries_.end() || it->lastUse < oldest->lastUse)) {
      oldest = it;
    }
  }
  if (oldest != entries_.end()) entries_.erase(oldest);
}

Status PeerMemory::map(pid_t pid, int fd, uint64_t serial, uint64_t offset, size_t bytes,
                       ByteRange used, char** out) {
  auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) {
    return e.pid == pid && e.fd == fd && e.serial == serial;
  });
  if (it == entries_.end()) {
    Entry e;
    WEFT_RETURN_IF_ERROR(open(pid, fd, serial, &e));
    evict(pid, fd);
    entries_.push_back(std::move(e));
    it = std::prev(entries_.end());
  }
  if (offset < kSharedHeaderBytes || offset > it->bytes || bytes > it->bytes - offset) {
    return errorf(weftRemoteError,
                  "a peer named %zu bytes at %llu of its weftMemAlloc allocation #%llu, which "
                  "holds %zu",
                  bytes, static_cast<unsigned long long>(offset),
                  static_cast<unsigned long long>(serial), it->bytes);
  }
  it->lastUse = ++uses_;
  const size_t from = std::min(used.from, bytes);
  populateRange(*it, offset + from, std::min(used.bytes, bytes - from));
  *out = it->mapping->base() + offset;
  return okStatus();
}

}  // namespace weft::shm
