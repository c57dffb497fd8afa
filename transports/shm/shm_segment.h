// The shm transport's memory. Each rank owns one memfd segment: a header page (with the
// doorbell, the window's owner and its control area), the window's regions (transports/window.h),
// then for every peer one incoming ring (a control page, then the ring's data). A segment is
// described to peers by a blob; a peer maps the header page, the regions and the ring meant for
// it.
//
// Blob (host byte order; every rank is on this host):
//   SegmentBlobHeader {magic "WFSH", version, pid, fd, segmentBytes, ringBytes, nRings,
//                      regionBytes[kWindowRegions]}
//   then nRings x SegmentBlobRing {sourceRank, offset of the ring's control page}
// fd is -1 and nRings 0 when the rank has no shm peers or could not create its segment.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "src/base/status.h"
#include "transports/byte_ring.h"
#include "transports/doorbell.h"
#include "transports/transport.h"
#include "transports/window.h"

namespace weft::shm {

constexpr size_t kPageBytes = 4096;

struct SegmentBlobHeader {
  uint32_t magic;
  uint16_t version;
  uint16_t reserved;
  int32_t pid;
  int32_t fd;
  uint64_t segmentBytes;
  uint64_t ringBytes;
  uint32_t nRings;
  uint32_t reserved2;
  uint64_t regionBytes[kWindowRegions];
};
static_assert(sizeof(SegmentBlobHeader) == 64);

struct SegmentBlobRing {
  int32_t sourceRank;
  uint32_t reserved;
  uint64_t offset;
};
static_assert(sizeof(SegmentBlobRing) == 16);

constexpr uint32_t kSegmentBlobMagic = 0x48534657u;  // "WFSH"
constexpr uint16_t kSegmentVersion = 7;              // 7: a window of regions

// A parsed, bounds-checked segment description.
struct SegmentInfo {
  pid_t pid = -1;
  int fd = -1;
  size_t segmentBytes = 0;
  size_t ringBytes = 0;
  std::array<size_t, kWindowRegions> regionBytes{};
  std::vector<SegmentBlobRing> rings;
};

Status parseSegmentBlob(const Blob& blob, int owner, SegmentInfo* out);
// What a rank without a segment publishes.
Blob emptySegmentBlob();

// Ring data capacity for a requested size: a power of two, at least a page.
size_t ringCapacityFor(size_t requested);
// A window region's size for a requested size: whole pages.
size_t regionCapacityFor(size_t requested);

// Maps every page of a shared mapping writable now: a first touch costs a fault per page (16 us
// each on some VMs), which would otherwise land in a communicator's first collectives. Where
// the kernel cannot (before Linux 5.14), the pages fault in on first use as before. Then reads a
// byte of each page: on a Firecracker guest (Linux 6.18) a page populated by the kernel still
// costs about 4 us at its first access from user space (a cost the guest's fault counters do
// not see; the host mapping the page then is a guess), and a page of a window first used by a
// larger chunk paid that in the middle of a collective. A read leaves the data of a peer's live
// segment as it is.
void populate(void* address, size_t bytes);

// One mmap, unmapped on destruction.
class Mapping {
 public:
  Mapping(void* address, size_t bytes) : address_(address), bytes_(bytes) {}
  ~Mapping();
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  char* base() const { return static_cast<char*>(address_); }

 private:
  void* address_;
  size_t bytes_;
};

// This rank's segment: the memfd stays open while any link uses it, so peers can open it.
class LocalSegment {
 public:
  // One incoming ring per peer, initialized empty.
  static Status create(const TransportContext& ctx, const std::vector<int>& peers,
                       std::shared_ptr<LocalSegment>* out);
  ~LocalSegment();

  Blob describe() const;
  // In the header page: what this rank sleeps on when it waits for its peers.
  Doorbell* doorbell() const;
  Window window() const;
  WindowOwner* owner() const;
  RingControl* control(size_t peerIndex) const;
  char* data(size_t peerIndex) const;
  size_t ringBytes() const { return ringBytes_; }

 private:
  LocalSegment() = default;
  size_t shared() const;  // bytes before the first ring
  int fd_ = -1;
  size_t bytes_ = 0;
  size_t ringBytes_ = 0;
  std::array<size_t, kWindowRegions> regionBytes_{};
  std::vector<int> sources_;
  std::unique_ptr<Mapping> mapping_;
};

// The ring that `owner`'s segment holds for `myRank`: opened through /proc, checked and mapped.
struct PeerRing {
  std::unique_ptr<Mapping> mapping;
  std::unique_ptr<Mapping> header;  // the owner's header page and window regions
  Doorbell* doorbell = nullptr;
  Window window;
  RingControl* control = nullptr;
  char* data = nullptr;
  size_t capacity = 0;
};
Status mapPeerRing(const TransportContext& ctx, int owner, const SegmentInfo& info, PeerRing* out);

}  // namespace weft::shm
