#include "tests/api/collective_checks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tests/api/reference.h"
#include "tests/api/weft_mem_allocator.h"

namespace weft::test {
namespace {

constexpr char kSentinel = 0x5a;

using Bytes = std::vector<char, WeftMemAllocator<char>>;

Bytes encoded(weftDataType_t type, const std::vector<double>& values) {
  std::vector<char> e = encode(type, values);
  return Bytes(e.begin(), e.end());
}

struct Ctx {
  weftComm_t comm;
  weftStream_t stream;
  int rank;
  int n;
};

void finish(const Ctx& c, weftResult_t r) {
  ASSERT_EQ(r, weftSuccess) << weftGetErrorString(r) << ": " << weftGetLastError(c.comm);
  if (c.stream != nullptr) {
    weftResult_t s = weftStreamSynchronize(c.stream);
    ASSERT_EQ(s, weftSuccess) << weftGetErrorString(s) << ": " << weftGetLastError(c.comm);
  }
}

std::string label(const char* coll, weftDataType_t type, weftRedOp_t op, size_t count, bool inPlace,
                  int root = -1) {
  std::string s = std::string(coll) + " " + nameOf(type) + " " + nameOf(op) + " count " +
                  std::to_string(count) + (inPlace ? " in-place" : " out-of-place");
  if (root >= 0) s += " root " + std::to_string(root);
  return s;
}

void allReduce(const Ctx& c, weftDataType_t type, weftRedOp_t op, size_t count, bool inPlace) {
  SCOPED_TRACE(label("all_reduce", type, op, count, inPlace));
  Bytes send = encoded(type, inputs(c.rank, 0, count, op, type));
  Bytes recv(send.size(), kSentinel);
  void* out = inPlace ? send.data() : recv.data();
  finish(c, weftAllReduce(send.data(), out, count, type, op, c.comm, c.stream));
  EXPECT_EQ(compare(type, op, c.n, out, reduceAcrossRanks(c.n, 0, count, op, type)), "");
}

void reduce(const Ctx& c, weftDataType_t type, weftRedOp_t op, size_t count, bool inPlace,
            int root) {
  SCOPED_TRACE(label("reduce", type, op, count, inPlace, root));
  Bytes send = encoded(type, inputs(c.rank, 0, count, op, type));
  const Bytes original = send;
  Bytes recv(send.size(), kSentinel);
  void* out = inPlace ? send.data() : recv.data();
  finish(c, weftReduce(send.data(), out, count, type, op, root, c.comm, c.stream));
  if (c.rank == root) {
    EXPECT_EQ(compare(type, op, c.n, out, reduceAcrossRanks(c.n, 0, count, op, type)), "");
  } else if (!inPlace) {
    EXPECT_EQ(recv, Bytes(recv.size(), kSentinel)) << "a non-root's recvbuff changed";
    EXPECT_EQ(send, original) << "a non-root's sendbuff changed";
  }
}

void broadcast(const Ctx& c, weftDataType_t type, size_t count, bool inPlace, int root) {
  SCOPED_TRACE(label("broadcast", type, weftSum, count, inPlace, root));
  std::vector<double> rootData = inputs(root, 0, count, weftSum, type);
  Bytes send = c.rank == root ? encoded(type, rootData) : Bytes(count * sizeOf(type), kSentinel);
  Bytes recv(send.size(), kSentinel);
  void* out = inPlace ? send.data() : recv.data();
  finish(c, weftBroadcast(send.data(), out, count, type, root, c.comm, c.stream));
  EXPECT_EQ(compare(type, weftSum, 1, out, rootData), "");
}

void reduceScatter(const Ctx& c, weftDataType_t type, weftRedOp_t op, size_t count, bool inPlace) {
  SCOPED_TRACE(label("reduce_scatter", type, op, count, inPlace));
  const size_t total = count * static_cast<size_t>(c.n);
  const size_t es = sizeOf(type);
  Bytes send = encoded(type, inputs(c.rank, 0, total, op, type));
  Bytes recv(count * es, kSentinel);
  void* out = inPlace ? send.data() + static_cast<size_t>(c.rank) * count * es : recv.data();
  finish(c, weftReduceScatter(send.data(), out, count, type, op, c.comm, c.stream));
  const size_t base = static_cast<size_t>(c.rank) * count;
  EXPECT_EQ(compare(type, op, c.n, out, reduceAcrossRanks(c.n, base, count, op, type)), "");
}

void allGather(const Ctx& c, weftDataType_t type, size_t count, bool inPlace) {
  SCOPED_TRACE(label("all_gather", type, weftSum, count, inPlace));
  const size_t es = sizeOf(type);
  Bytes mine = encoded(type, inputs(c.rank, 0, count, weftSum, type));
  Bytes recv(count * es * static_cast<size_t>(c.n), kSentinel);
  const void* in = mine.data();
  if (inPlace) {
    char* slot = recv.data() + static_cast<size_t>(c.rank) * count * es;
    if (!mine.empty()) memcpy(slot, mine.data(), mine.size());
    in = slot;
  }
  finish(c, weftAllGather(in, recv.data(), count, type, c.comm, c.stream));
  std::vector<double> expected;
  for (int r = 0; r < c.n; ++r) {
    auto v = inputs(r, 0, count, weftSum, type);
    expected.insert(expected.end(), v.begin(), v.end());
  }
  EXPECT_EQ(compare(type, weftSum, 1, recv.data(), expected), "");
}

// Rank r's block for rank p holds inputs(r, p * 1000003 + i): distinct per sender and receiver.
std::vector<double> block(int from, int to, size_t count, weftDataType_t type) {
  return inputs(from, static_cast<size_t>(to) * 1000003u, count, weftSum, type);
}

// In place, both buffers are the same one.
void allToAll(const Ctx& c, weftDataType_t type, size_t count, bool inPlace) {
  SCOPED_TRACE(label("all_to_all", type, weftSum, count, inPlace));
  std::vector<double> sendVals;
  for (int p = 0; p < c.n; ++p) {
    auto b = block(c.rank, p, count, type);
    sendVals.insert(sendVals.end(), b.begin(), b.end());
  }
  Bytes send = encoded(type, sendVals);
  Bytes recv = inPlace ? send : Bytes(send.size(), kSentinel);
  const void* in = inPlace ? recv.data() : send.data();
  finish(c, weftAllToAll(in, recv.data(), count, type, c.comm, c.stream));
  std::vector<double> expected;
  for (int r = 0; r < c.n; ++r) {
    auto b = block(r, c.rank, count, type);
    expected.insert(expected.end(), b.begin(), b.end());
  }
  EXPECT_EQ(compare(type, weftSum, 1, recv.data(), expected), "");
}

// Irregular all-to-allv: rank r sends (r + 2p + scale) % 4 * scale elements to p (some zero),
// laid out backwards with a gap of 3 elements between blocks.
size_t vCount(int from, int to, size_t scale) {
  return static_cast<size_t>((from + 2 * to) % 4) * scale;
}

void allToAllv(const Ctx& c, weftDataType_t type, size_t scale) {
  SCOPED_TRACE(label("all_to_allv", type, weftSum, scale, false));
  const auto n = static_cast<size_t>(c.n);
  std::vector<size_t> sc(n), sd(n), rc(n), rd(n);
  size_t sendTotal = 0;
  size_t recvTotal = 0;
  for (int p = c.n - 1; p >= 0; --p) {
    sc[p] = vCount(c.rank, p, scale);
    sd[p] = sendTotal;
    sendTotal += sc[p] + 3;
    rc[p] = vCount(p, c.rank, scale);
    rd[p] = recvTotal;
    recvTotal += rc[p] + 3;
  }
  std::vector<double> sendVals(sendTotal, 0);
  for (int p = 0; p < c.n; ++p) {
    auto b = block(c.rank, p, sc[p], type);
    std::copy(b.begin(), b.end(), sendVals.begin() + static_cast<long>(sd[p]));
  }
  Bytes send = encoded(type, sendVals);
  Bytes recv(recvTotal * sizeOf(type), kSentinel);
  finish(c, weftAllToAllv(send.data(), sc.data(), sd.data(), recv.data(), rc.data(), rd.data(),
                          type, c.comm, c.stream));
  for (int p = 0; p < c.n; ++p) {
    const char* at = recv.data() + rd[p] * sizeOf(type);
    EXPECT_EQ(compare(type, weftSum, 1, at, block(p, c.rank, rc[p], type)), "") << "from " << p;
    // The gap after each block stays untouched.
    for (size_t g = 0; g < 3 * sizeOf(type); ++g) {
      ASSERT_EQ(at[rc[p] * sizeOf(type) + g], kSentinel) << "gap after block from " << p;
    }
  }
}

}  // namespace

void useWeftMemAlloc(bool on) {
  weftMemAllocInForce() = on;
}

const char* nameOf(Coll coll) {
  static const char* kNames[] = {"AllReduce", "Broadcast", "Reduce",   "ReduceScatter",
                                 "AllGather", "AllToAll",  "AllToAllv"};
  return kNames[static_cast<int>(coll)];
}

std::vector<size_t> standardCounts(Coll coll, int nranks) {
  const char* env = getenv("WEFT_TEST_LARGE_COUNT");
  const size_t big = env != nullptr ? strtoull(env, nullptr, 10) : (1u << 20) + 3;
  bool perRank = coll == Coll::kReduceScatter || coll == Coll::kAllGather ||
                 coll == Coll::kAllToAll || coll == Coll::kAllToAllv;
  size_t large = perRank ? (big / static_cast<size_t>(nranks)) | 1 : big;
  if (coll == Coll::kAllToAllv) large = large / 2 + 1;  // its blocks hold up to 3x the scale
  return {0, 1, 7, 1023, large};
}

// Every (type, op) pair runs at the small counts. At the largest count every type runs with
// sum and every op with one integer, one float and one half type, so each dimension is covered
// at size without the full product's cost in reference work.
std::vector<weftRedOp_t> opsFor(weftDataType_t type, size_t count, size_t largest) {
  bool full = count < largest || type == weftInt32 || type == weftFloat32 || type == weftFloat16;
  if (full) return {std::begin(kAllOps), std::end(kAllOps)};
  return {weftSum};
}

namespace {

// One call of coll, checked; allToAllv ignores inPlace, non-reductions op.
void checkCall(const Ctx& c, Coll coll, weftDataType_t type, weftRedOp_t op, size_t count,
               bool inPlace, int root) {
  switch (coll) {
    case Coll::kAllReduce:
      return allReduce(c, type, op, count, inPlace);
    case Coll::kReduce:
      return reduce(c, type, op, count, inPlace, root);
    case Coll::kReduceScatter:
      return reduceScatter(c, type, op, count, inPlace);
    case Coll::kBroadcast:
      return broadcast(c, type, count, inPlace, root);
    case Coll::kAllGather:
      return allGather(c, type, count, inPlace);
    case Coll::kAllToAll:
      return allToAll(c, type, count, inPlace);
    case Coll::kAllToAllv:
      return allToAllv(c, type, count);
  }
}

Ctx contextOf(weftComm_t comm, weftStream_t stream) {
  Ctx c{comm, stream, 0, 0};
  EXPECT_EQ(weftCommUserRank(comm, &c.rank), weftSuccess);
  EXPECT_EQ(weftCommCount(comm, &c.n), weftSuccess);
  return c;
}

}  // namespace

void checkCollective(weftComm_t comm, Coll coll, const std::vector<size_t>& counts,
                     weftStream_t stream, const std::vector<weftDataType_t>& types) {
  const Ctx c = contextOf(comm, stream);
  int round = 0;
  const size_t largest = *std::max_element(counts.begin(), counts.end());
  const std::vector<weftDataType_t> all(std::begin(kAllTypes), std::end(kAllTypes));
  const bool reduces =
      coll == Coll::kAllReduce || coll == Coll::kReduce || coll == Coll::kReduceScatter;
  const bool hasInPlace = coll != Coll::kAllToAllv;
  for (weftDataType_t type : types.empty() ? all : types) {
    for (size_t count : counts) {
      const std::vector<weftRedOp_t> ops =
          reduces ? opsFor(type, count, largest) : std::vector<weftRedOp_t>{weftSum};
      for (bool inPlace : {false, true}) {
        const int root = (round++) % c.n;
        if (inPlace && !hasInPlace) continue;
        for (weftRedOp_t op : ops)
          checkCall(c, coll, type, op, count, inPlace, root);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

void checkOneCall(weftComm_t comm, Coll coll, weftDataType_t type, weftRedOp_t op, size_t count,
                  bool inPlace, int root, weftStream_t stream) {
  checkCall(contextOf(comm, stream), coll, type, op, count, inPlace, root);
}

void checkSendRecv(weftComm_t comm) {
  constexpr size_t kCount = 1001;
  int rank = 0;
  int n = 0;
  ASSERT_EQ(weftCommUserRank(comm, &rank), weftSuccess);
  ASSERT_EQ(weftCommCount(comm, &n), weftSuccess);
  std::vector<std::vector<int32_t>> out(n), in(n);
  ASSERT_EQ(weftGroupStart(), weftSuccess);
  for (int p = 0; p < n; ++p) {
    if (p == rank) continue;
    out[p].assign(kCount, 0);
    for (size_t i = 0; i < kCount; ++i)
      out[p][i] = rank * 1000003 + p * 1009 + static_cast<int32_t>(i);
    in[p].assign(kCount, -1);
    ASSERT_EQ(weftSend(out[p].data(), kCount, weftInt32, p, comm, nullptr), weftSuccess);
    ASSERT_EQ(weftRecv(in[p].data(), kCount, weftInt32, p, comm, nullptr), weftSuccess);
  }
  ASSERT_EQ(weftGroupEnd(), weftSuccess) << weftGetLastError(comm);
  for (int p = 0; p < n; ++p) {
    for (size_t i = 0; p != rank && i < kCount; ++i)
      ASSERT_EQ(in[p][i], p * 1000003 + rank * 1009 + static_cast<int32_t>(i)) << "from " << p;
  }
}

}  // namespace weft::test
