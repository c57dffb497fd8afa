// weftMemAlloc's memory and its mapping by peers: this process plays the peer, opening its own
// allocations through /proc/self/fd as another process would through /proc/<pid>/fd.
#include "transports/shm/shared_memory.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "transports/shm/peer_memory.h"

namespace weft::shm {
namespace {

constexpr ByteRange kAll{0, SIZE_MAX};

// What follows `field` in /proc/self/smaps for the mapping at `address`; empty if none.
std::string smapsField(const void* address, const std::string& field) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<uintptr_t>(address);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    uintptr_t from = 0;
    uintptr_t to = 0;
    if (sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR " ", &from, &to) == 2) {  // a mapping
      inside = from <= at && at < to;
    } else if (inside && line.rfind(field, 0) == 0) {
      return line.substr(field.size());
    }
  }
  return "";
}

// Bytes of this process's page tables that map the pages of the mapping at `address` (its Rss).
size_t residentBytes(const void* address) {
  const std::string kb = smapsField(address, "Rss:");
  return kb.empty() ? 0 : std::stoul(kb) << 10;
}

// Whether the mapping at `address` asked for huge pages (MADV_HUGEPAGE shows as "hg").
bool asksForHugePages(const void* address) {
  return (smapsField(address, "VmFlags:") + " ").find(" hg ") != std::string::npos;
}

TEST(SharedMemory, FindsBuffersInsideOneAllocationOnly) {
  void* a = nullptr;
  void* b = nullptr;
  ASSERT_TRUE(allocateShared(10000, &a).ok());
  ASSERT_TRUE(allocateShared(1, &b).ok());
  char* p = static_cast<char*>(a);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 4096, 0u);
  EXPECT_EQ(p[0], 0);
  EXPECT_EQ(p[9999], 0);
  SharedRange r;
  ASSERT_TRUE(findShared(p + 100, 9900, &r));
  EXPECT_EQ(r.offset, kSharedHeaderBytes + 100);
  EXPECT_GE(r.fd, 0);
  SharedRange rb;
  ASSERT_TRUE(findShared(b, 1, &rb));
  EXPECT_NE(rb.serial, r.serial);
  // Whole pages are usable; past them, or before the allocation, is not shared memory.
  EXPECT_TRUE(findShared(p, 12288, &r));
  EXPECT_FALSE(findShared(p, 12289, &r));
  EXPECT_FALSE(findShared(p - 1, 2, &r));
  int local = 0;
  EXPECT_FALSE(findShared(&local, sizeof(local), &r));
  EXPECT_TRUE(freeShared(a).ok());
  EXPECT_FALSE(findShared(p, 1, &r));
  Status again = freeShared(a);
  EXPECT_EQ(again.code(), weftInvalidArgument);
  EXPECT_NE(again.message().find("not returned by weftMemAlloc"), std::string::npos);
  EXPECT_EQ(freeShared(&local).code(), weftInvalidArgument);
  EXPECT_TRUE(freeShared(b).ok());
}

// The whole 2 MiB steps of an allocation ask for huge pages, in the owner's mapping and a peer's;
// the tail past them (here the page after the header's step) and smaller allocations do not.
TEST(SharedMemory, AsksForHugePagesInWholeSteps) {
  void* big = nullptr;
  void* small = nullptr;
  ASSERT_TRUE(allocateShared(kHugePageBytes, &big).ok());
  ASSERT_TRUE(allocateShared(kHugePageBytes / 2, &small).ok());
  if (access("/sys/kernel/mm/transparent_hugepage", F_OK) != 0 ||
      smapsField(big, "VmFlags:").empty()) {
    EXPECT_TRUE(freeShared(big).ok());
    EXPECT_TRUE(freeShared(small).ok());
    GTEST_SKIP() << "this kernel has no transparent huge pages, or shows no VmFlags";
  }
  EXPECT_TRUE(asksForHugePages(big));
  EXPECT_FALSE(asksForHugePages(static_cast<char*>(big) + kHugePageBytes - 4096));
  EXPECT_FALSE(asksForHugePages(small));
  PeerMemory peers;
  for (void* a : {big, small}) {
    SharedRange r;
    ASSERT_TRUE(findShared(a, 4096, &r));
    char* there = nullptr;
    ASSERT_TRUE(peers.map(getpid(), r.fd, r.serial, r.offset, 4096, kAll, &there).ok());
    EXPECT_EQ(asksForHugePages(there), a == big);
  }
  EXPECT_TRUE(freeShared(big).ok());
  EXPECT_TRUE(freeShared(small).ok());
}

// What a peer maps is the same memory: writes show on both sides.
TEST(PeerMemory, MapsAnAllocationAndKeepsTheMapping) {
  void* a = nullptr;
  ASSERT_TRUE(allocateShared(1 << 20, &a).ok());
  SharedRange r;
  ASSERT_TRUE(findShared(static_cast<char*>(a) + 4096, 8192, &r));
  PeerMemory peers;
  char* there = nullptr;
  ASSERT_TRUE(peers.map(getpid(), r.fd, r.serial, r.offset, 8192, kAll, &there).ok());
  EXPECT_NE(there, static_cast<char*>(a) + 4096);  // another mapping of the same pages
  memcpy(there, "mapped", 7);
  EXPECT_STREQ(static_cast<char*>(a) + 4096, "mapped");
  strcpy(static_cast<char*>(a) + 4096 + 100, "back");  // NOLINT
  EXPECT_STREQ(there + 100, "back");
  char* again = nullptr;
  ASSERT_TRUE(peers.map(getpid(), r.fd, r.serial, r.offset + 8, 8, kAll, &again).ok());
  EXPECT_EQ(again, there + 8);  // the same mapping, kept
  EXPECT_TRUE(freeShared(a).ok());
}

// Only the part of a buffer that a call uses gets populated (each page costs microseconds on some
// VMs): a rank's share of an 8-rank all-reduce is an eighth of each peer's buffer.
TEST(PeerMemory, PopulatesOnlyWhatTheCallUses) {
  constexpr size_t kMiB = 1 << 20;
  void* a = nullptr;
  ASSERT_TRUE(allocateShared(16 * kMiB, &a).ok());
  memset(a, 1, 16 * kMiB);  // every page exists, as a peer's filled buffer
  SharedRange r;
  ASSERT_TRUE(findShared(a, 16 * kMiB, &r));
  PeerMemory peers;
  char* there = nullptr;
  ASSERT_TRUE(
      peers.map(getpid(), r.fd, r.serial, r.offset, 16 * kMiB, {8 * kMiB, kMiB}, &there).ok());
  // The 2 MiB steps that hold the used MiB, at most: not the 16 MiB named.
  EXPECT_GE(residentBytes(there), kMiB);
  EXPECT_LE(residentBytes(there), 4 * kMiB);
  EXPECT_EQ(there[8 * kMiB], 1);
  // A used range past the end of the named one is cut to it.
  char* whole = nullptr;
  ASSERT_TRUE(peers.map(getpid(), r.fd, r.serial, r.offset, 16 * kMiB, kAll, &whole).ok());
  EXPECT_EQ(whole, there);
  EXPECT_GE(residentBytes(there), 16 * kMiB);
  EXPECT_TRUE(freeShared(a).ok());
}

// Whatever a peer posts is checked: a range past the allocation, a serial that is not the
// allocation's, an fd that is no allocation at all.
TEST(PeerMemory, RefusesWhatThePeerGotWrong) {
  void* a = nullptr;
  ASSERT_TRUE(allocateShared(4096, &a).ok());
  SharedRange r;
  ASSERT_TRUE(findShared(a, 4096, &r));
  PeerMemory peers;
  char* out = nullptr;
  Status past = peers.map(getpid(), r.fd, r.serial, r.offset, 4097, kAll, &out);
  EXPECT_EQ(past.code(), weftRemoteError);
  EXPECT_NE(past.message().find("which holds"), std::string::npos) << past.message();
  EXPECT_EQ(peers.map(getpid(), r.fd, r.serial, 0, 16, kAll, &out).code(), weftRemoteError);
  Status serial = peers.map(getpid(), r.fd, r.serial + 1000, r.offset, 16, kAll, &out);
  EXPECT_EQ(serial.code(), weftRemoteError);
  EXPECT_NE(serial.message().find("is not the weftMemAlloc allocation"), std::string::npos)
      << serial.message();
  int pipes[2];
  ASSERT_EQ(pipe(pipes), 0);
  EXPECT_EQ(peers.map(getpid(), pipes[0], 1, 4096, 16, kAll, &out).code(), weftRemoteError);
  close(pipes[0]);
  close(pipes[1]);
  EXPECT_EQ(peers.map(getpid(), 987654, 1, 4096, 16, kAll, &out).code(), weftRemoteError);
  EXPECT_TRUE(freeShared(a).ok());
}

// A freed allocation's fd number comes back with the next one: the peer maps the new one, not
// the memory it kept for the old.
TEST(PeerMemory, AReusedFdMapsTheNewAllocation) {
  PeerMemory peers;
  int lastFd = -1;
  for (int round = 0; round < 3; ++round) {
    void* a = nullptr;
    ASSERT_TRUE(allocateShared(4096, &a).ok());
    memset(a, 'a' + round, 4096);
    SharedRange r;
    ASSERT_TRUE(findShared(a, 4096, &r));
    if (round > 0) {
      EXPECT_EQ(r.fd, lastFd);  // the lowest free fd, as the kernel hands them out
    }
    lastFd = r.fd;
    char* there = nullptr;
    ASSERT_TRUE(peers.map(getpid(), r.fd, r.serial, r.offset, 4096, kAll, &there).ok());
    EXPECT_EQ(there[4095], 'a' + round) << "round " << round;
    EXPECT_TRUE(freeShared(a).ok());
  }
}

// Many live allocations: at most kPerProcess stay mapped, and every one still maps right.
TEST(PeerMemory, KeepsABoundedNumberOfMappings) {
  PeerMemory peers;
  std::vector<void*> all(PeerMemory::kPerProcess + 8);
  for (size_t i = 0; i < all.size(); ++i) {
    ASSERT_TRUE(allocateShared(4096, &all[i]).ok());
    static_cast<char*>(all[i])[0] = static_cast<char>(i);
  }
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < all.size(); ++i) {
      SharedRange r;
      ASSERT_TRUE(findShared(all[i], 1, &r));
      char* there = nullptr;
      ASSERT_TRUE(peers.map(getpid(), r.fd, r.serial, r.offset, 1, kAll, &there).ok());
      EXPECT_EQ(there[0], static_cast<char>(i));
    }
  }
  for (void* p : all)
    EXPECT_TRUE(freeShared(p).ok());
}

// One call that names more allocations of a process than kPerProcess (thread ranks of one
// process) keeps them all mapped until the next call: none is unmapped under the call.
TEST(PeerMemory, KeepsEveryMappingOfTheCurrentCall) {
  PeerMemory peers;
  std::vector<void*> all(PeerMemory::kPerProcess + 8);
  for (void*& p : all)
    ASSERT_TRUE(allocateShared(4096, &p).ok());
  auto mapOne = [&](void* p) {
    SharedRange r;
    EXPECT_TRUE(findShared(p, 1, &r));
    char* there = nullptr;
    EXPECT_TRUE(peers.map(getpid(), r.fd, r.serial, r.offset, 1, kAll, &there).ok());
    return there;
  };
  peers.beginCall();
  std::vector<char*> mapped(all.size());
  for (size_t i = 0; i < all.size(); ++i)
    mapped[i] = mapOne(all[i]);
  for (size_t i = 0; i < all.size(); ++i)
    mapped[i][0] = static_cast<char>(i + 1);  // through the mapping: a crash if it was dropped
  for (size_t i = 0; i < all.size(); ++i)
    EXPECT_EQ(static_cast<char*>(all[i])[0], static_cast<char>(i + 1));
  peers.beginCall();  // the next call may evict again, and still maps right
  for (size_t i = 0; i < all.size(); ++i)
    EXPECT_EQ(mapOne(all[all.size() - 1 - i])[0], static_cast<char>(all.size() - i));
  for (void* p : all)
    EXPECT_TRUE(freeShared(p).ok());
}

}  // namespace
}  // namespace weft::shm
