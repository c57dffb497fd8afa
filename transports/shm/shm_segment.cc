#include "transports/shm/shm_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <new>
#include <string>

#include "src/base/log.h"
#include "transports/cross_memory.h"

namespace weft::shm {
namespace {

// Written at the start of every segment, so a peer can tell it mapped the right one.
struct SegmentHeader {
  uint64_t magic;
  uint64_t commTag;
  int32_t rank;
  int32_t reserved;
  uint64_t bytes;
};
constexpr uint64_t kSegmentMagic = 0x544e454d47455346ull;  // "FSEGMENT"
// The doorbell sits in the header page, on a cache line of its own.
constexpr size_t kDoorbellOffset = 128;
static_assert(kDoorbellOffset >= sizeof(SegmentHeader) && kDoorbellOffset % 64 == 0);
constexpr size_t kMaxRingBytes = size_t{1} << 30;

// The window's owner and its control area share the header page with the doorbell, each on
// cache lines of their own.
constexpr size_t kOwnerOffset = 192;
constexpr size_t kWindowControlOffset = 256;
static_assert(kOwnerOffset >= kDoorbellOffset + sizeof(Doorbell));
static_assert(kWindowControlOffset >= kOwnerOffset + sizeof(WindowOwner));
static_assert(kWindowControlOffset + kWindowControlBytes <= kPageBytes);
constexpr size_t kMaxRegionBytes = size_t{1} << 30;

using Regions = std::array<size_t, kWindowRegions>;

// The header page and the window's regions: what every peer maps.
size_t sharedBytes(const Regions& regions) {
  size_t bytes = kPageBytes;
  for (size_t r : regions)
    bytes += r;
  return bytes;
}

size_t ringOffset(size_t index, size_t ringBytes, size_t shared) {
  return shared + index * (kPageBytes + ringBytes);
}

Window windowAt(char* base, const Regions& regions) {
  Window w;
  w.control = base + kWindowControlOffset;
  char* at = base + kPageBytes;
  for (size_t i = 0; i < kWindowRegions; ++i) {
    w.regions[i] = at;
    w.regionBytes[i] = regions[i];
    at += regions[i];
  }
  w.owner = reinterpret_cast<const WindowOwner*>(base + kOwnerOffset);
  w.doorbell = reinterpret_cast<Doorbell*>(base + kDoorbellOffset);
  return w;
}

const char* kUseTcpHint =
    "; ranks in different containers or pid namespaces cannot share memory this way: set "
    "WEFT_TRANSPORT=tcp";

}  // namespace

void populate(void* address, size_t bytes) {
#ifdef MADV_POPULATE_WRITE
  (void)madvise(address, bytes, MADV_POPULATE_WRITE);
#endif
  const auto* page = static_cast<const volatile char*>(address);
  for (size_t at = 0; at < bytes; at += kPageBytes)
    (void)page[at];
}

size_t regionCapacityFor(size_t requested) {
  size_t bytes = std::min(requested, kMaxRegionBytes);
  return (bytes + kPageBytes - 1) / kPageBytes * kPageBytes;
}

size_t ringCapacityFor(size_t requested) {
  return std::bit_ceil(std::clamp(requested, kPageBytes, kMaxRingBytes));
}

Status parseSegmentBlob(const Blob& blob, int owner, SegmentInfo* out) {
  SegmentBlobHeader h;
  if (blob.size() < sizeof(h)) {
    return errorf(weftInternalError, "shm: rank %d sent a %zu-byte segment description", owner,
                  blob.size());
  }
  memcpy(&h, blob.data(), sizeof(h));
  if (h.magic != kSegmentBlobMagic || h.version != kSegmentVersion ||
      blob.size() != sizeof(h) + size_t{h.nRings} * sizeof(SegmentBlobRing)) {
    return errorf(weftInternalError,
                  "shm: rank %d sent a malformed segment description (magic 0x%08x, version %u, "
                  "%zu bytes): mismatched Weft versions?",
                  owner, h.magic, h.version, blob.size());
  }
  *out = SegmentInfo{h.pid, h.fd, h.segmentBytes, h.ringBytes, {}, {}};
  if (h.nRings == 0) return okStatus();
  bool sane = h.pid > 0 && h.fd >= 0 && h.ringBytes >= kPageBytes && h.ringBytes <= kMaxRingBytes &&
              std::has_single_bit(h.ringBytes);
  for (size_t i = 0; i < kWindowRegions; ++i) {
    sane = sane && h.regionBytes[i] % kPageBytes == 0 && h.regionBytes[i] <= kMaxRegionBytes;
    out->regionBytes[i] = h.regionBytes[i];
  }
  sane = sane && h.segmentBytes >= sharedBytes(out->regionBytes);
  out->rings.resize(h.nRings);
  memcpy(out->rings.data(), blob.data() + sizeof(h), h.nRings * sizeof(SegmentBlobRing));
  for (const auto& r : out->rings) {
    sane = sane && r.offset % kPageBytes == 0 && r.offset <= h.segmentBytes &&
           h.segmentBytes - r.offset >= kPageBytes + h.ringBytes;
  }
  if (!sane) {
    return errorf(weftInternalError, "shm: rank %d sent an inconsistent segment description",
                  owner);
  }
  return okStatus();
}

Blob emptySegmentBlob() {
  SegmentBlobHeader h{
      kSegmentBlobMagic, kSegmentVersion, 0, static_cast<int32_t>(getpid()), -1, 0, 0, 0, 0, {}};
  Blob blob(sizeof(h));
  memcpy(blob.data(), &h, sizeof(h));
  return blob;
}

Mapping::~Mapping() {
  if (address_ != nullptr) munmap(address_, bytes_);
}

Status LocalSegment::create(const TransportContext& ctx, const std::vector<int>& peers,
                            std::shared_ptr<LocalSegment>* out) {
  std::shared_ptr<LocalSegment> s(new LocalSegment());
  s->ringBytes_ = ringCapacityFor(ctx.shmRingBytes);
  for (size_t i = 0; i < kWindowRegions; ++i)
    s->regionBytes_[i] = regionCapacityFor(ctx.shmWindowRegions[i]);
  s->bytes_ = ringOffset(peers.size(), s->ringBytes_, s->shared());
  s->sources_ = peers;
  // Never named in /dev/shm: peers reach it through this process's fd table.
  s->fd_ = memfd_create("weft-shm", MFD_CLOEXEC);
  if (s->fd_ < 0) return systemError("shm: memfd_create", errno);
  if (ftruncate(s->fd_, static_cast<off_t>(s->bytes_)) != 0) {
    return systemError(strprintf("shm: sizing a %zu-byte segment", s->bytes_).c_str(), errno);
  }
  void* base = mmap(nullptr, s->bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd_, 0);
  if (base == MAP_FAILED) return systemError("shm: mmap of own segment", errno);
  s->mapping_ = std::make_unique<Mapping>(base, s->bytes_);
  // Allocated here, by its owner: the pages sit on the owner's NUMA node (the node that reads
  // its rings and writes most of its window).
  populate(base, s->bytes_);
  SegmentHeader header{kSegmentMagic, ctx.commTag, ctx.rank, 0, s->bytes_};
  memcpy(base, &header, sizeof(header));
  new (static_cast<char*>(base) + kDoorbellOffset) Doorbell();
  auto* owner = new (static_cast<char*>(base) + kOwnerOffset) WindowOwner();
  owner->pid = static_cast<int32_t>(getpid());
  owner->selfAddress = addressOf(&owner->selfAddress);
  if (ctx.formatWindow) ctx.formatWindow(s->window());
  for (size_t i = 0; i < peers.size(); ++i)
    ByteRing::initialize(s->control(i));
  WEFT_INFO(kShm, "shm: segment of %zu bytes (fd %d) with %zu rings of %zu bytes", s->bytes_,
            s->fd_, peers.size(), s->ringBytes_);
  *out = std::move(s);
  return okStatus();
}

LocalSegment::~LocalSegment() {
  mapping_.reset();
  if (fd_ >= 0) ::close(fd_);
}

Blob LocalSegment::describe() const {
  SegmentBlobHeader h{kSegmentBlobMagic,
                      kSegmentVersion,
                      0,
                      static_cast<int32_t>(getpid()),
                      fd_,
                      bytes_,
                      ringBytes_,
                      static_cast<uint32_t>(sources_.size()),
                      0,
                      {regionBytes_[0], regionBytes_[1], regionBytes_[2]}};
  Blob blob(sizeof(h) + sources_.size() * sizeof(SegmentBlobRing));
  memcpy(blob.data(), &h, sizeof(h));
  for (size_t i = 0; i < sources_.size(); ++i) {
    SegmentBlobRing r{sources_[i], 0, ringOffset(i, ringBytes_, shared())};
    memcpy(blob.data() + sizeof(h) + i * sizeof(r), &r, sizeof(r));
  }
  return blob;
}

size_t LocalSegment::shared() const {
  return sharedBytes(regionBytes_);
}

Window LocalSegment::window() const {
  return windowAt(mapping_->base(), regionBytes_);
}

WindowOwner* LocalSegment::owner() const {
  return reinterpret_cast<WindowOwner*>(mapping_->base() + kOwnerOffset);
}

Doorbell* LocalSegment::doorbell() const {
  return reinterpret_cast<Doorbell*>(mapping_->base() + kDoorbellOffset);
}

static_assert(sizeof(RingControl) <= kPageBytes, "a ring's control fits the page before its data");

RingControl* LocalSegment::control(size_t peerIndex) const {
  return reinterpret_cast<RingControl*>(mapping_->base() +
                                        ringOffset(peerIndex, ringBytes_, shared()));
}

char* LocalSegment::data(size_t peerIndex) const {
  return mapping_->base() + ringOffset(peerIndex, ringBytes_, shared()) + kPageBytes;
}

namespace {

// Opens the owner's memfd through /proc and checks it is the segment the blob describes.
Status openPeerSegment(const TransportContext& ctx, int owner, const SegmentInfo& info,
                       int* fdOut) {
  std::string path = strprintf("/proc/%d/fd/%d", static_cast<int>(info.pid), info.fd);
  int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    return errorf(weftSystemError, "shm: cannot open the segment of rank %d (pid %d) at %s: %s%s",
                  owner, static_cast<int>(info.pid), path.c_str(), strerror(err), kUseTcpHint);
  }
  struct stat st;
  SegmentHeader header{};
  bool same = fstat(fd, &st) == 0 && static_cast<size_t>(st.st_size) == info.segmentBytes &&
              pread(fd, &header, sizeof(header), 0) == static_cast<ssize_t>(sizeof(header)) &&
              header.magic == kSegmentMagic && header.commTag == ctx.commTag &&
              header.rank == owner && header.bytes == info.segmentBytes;
  if (!same) {
    ::close(fd);
    return errorf(weftSystemError,
                  "shm: %s is not the segment rank %d published (another process, host or "
                  "communicator?)%s",
                  path.c_str(), owner, kUseTcpHint);
  }
  *fdOut = fd;
  return okStatus();
}

}  // namespace

Status mapPeerRing(const TransportContext& ctx, int owner, const SegmentInfo& info, PeerRing* out) {
  const SegmentBlobRing* ring = nullptr;
  for (const auto& r : info.rings) {
    if (r.sourceRank == ctx.rank) ring = &r;
  }
  if (ring == nullptr) {
    return errorf(weftInternalError,
                  "shm: rank %d has no ring for rank %d: the ranks disagree on who uses shm", owner,
                  ctx.rank);
  }
  int fd = -1;
  WEFT_RETURN_IF_ERROR(openPeerSegment(ctx, owner, info, &fd));
  size_t bytes = kPageBytes + info.ringBytes;
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                    static_cast<off_t>(ring->offset));
  int err = errno;
  const size_t headerBytes = sharedBytes(info.regionBytes);
  void* header = base == MAP_FAILED
                     ? MAP_FAILED
                     : mmap(nullptr, headerBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (header == MAP_FAILED) err = errno;
  ::close(fd);  // the mappings keep the memory; the owner keeps its fd open
  if (base != MAP_FAILED) out->mapping = std::make_unique<Mapping>(base, bytes);
  if (header == MAP_FAILED) {
    return errorf(weftSystemError, "shm: cannot map the segment of rank %d (pid %d): %s%s", owner,
                  static_cast<int>(info.pid), strerror(err), kUseTcpHint);
  }
  out->header = std::make_unique<Mapping>(header, headerBytes);
  populate(base, bytes);
  populate(header, headerBytes);
  out->window = windowAt(static_cast<char*>(header), info.regionBytes);
  out->doorbell = out->window.doorbell;
  out->control = reinterpret_cast<RingControl*>(base);
  out->data = static_cast<char*>(base) + kPageBytes;
  out->capacity = info.ringBytes;
  return okStatus();
}

}  // namespace weft::shm
