#include "tests/collectives/harness.h"

#include <algorithm>
#include <cstdint>
#include <memory>

#include "collectives/reduce.h"
#include "collectives/simulator.h"

namespace weft::test {
namespace {

using ::testing::AssertionFailure;
using ::testing::AssertionResult;
using ::testing::AssertionSuccess;

// A value no correct result takes.
template <typename T>
T sentinel() {
  return static_cast<T>(-7777777);
}

// Inputs: distinct per rank and position; for products only +-1 (and 2, 0.5 for floats), so
// every result is exact whatever the order of reduction.
template <typename T>
T inputValue(weftRedOp_t op, int rank, size_t i) {
  if (op == weftProd) {
    int k = static_cast<int>((static_cast<size_t>(rank) * 7 + i * 3) % 5);
    if constexpr (std::is_floating_point_v<T>) {
      static constexpr double kValues[] = {1, -1, 2, 0.5, 1};
      return static_cast<T>(kValues[k]);
    } else {
      return static_cast<T>(k == 1 || k == 3 ? -1 : 1);
    }
  }
  return static_cast<T>((rank + 1) * 1009 + static_cast<long>(i * 37 % 1000) - 500);
}

template <typename T>
T applyOp(weftRedOp_t op, T a, T b) {
  switch (op) {
    case weftProd:
      return a * b;
    case weftMax:
      return std::max(a, b);
    case weftMin:
      return std::min(a, b);
    default:
      return a + b;
  }
}

// The layout of an all-to-allv for every rank.
struct VLayout {
  std::vector<std::vector<size_t>> sendCounts, sendDispls, recvCounts, recvDispls;
};

VLayout layoutOf(const std::vector<std::vector<size_t>>& counts) {
  const size_t n = counts.size();
  VLayout v;
  v.sendCounts = v.sendDispls = v.recvCounts = v.recvDispls =
      std::vector<std::vector<size_t>>(n, std::vector<size_t>(n, 0));
  for (size_t p = 0; p < n; ++p) {
    size_t at = 1;  // a gap at the start too
    for (size_t q = 0; q < n; ++q) {
      at += q % 3;  // gaps
      v.sendCounts[p][q] = counts[p][q];
      v.sendDispls[p][q] = at;
      at += counts[p][q];
    }
  }
  for (size_t q = 0; q < n; ++q) {
    size_t at = 0;
    for (size_t k = 0; k < n; ++k) {
      size_t p = n - 1 - k;  // blocks in reverse order of source
      at += p % 2;
      v.recvCounts[q][p] = counts[p][q];
      v.recvDispls[q][p] = at;
      at += counts[p][q];
    }
  }
  return v;
}

template <typename T>
BufferView viewOf(T* base, size_t count) {
  return {reinterpret_cast<char*>(base), count, sizeof(T)};
}

// One rank's memory: what the caller owns, and the views the schedule gets.
template <typename T>
struct RankMemory {
  std::unique_ptr<T[]> sendStore, recvStore, scratch;  // exact sizes, for ASan
  size_t sendStoreCount = 0, recvStoreCount = 0;
  BufferView send, recv;
  std::vector<T> input;        // what the send view held
  std::vector<T> recvBefore;   // what the receive view held
  std::vector<T> storeBefore;  // the send store (in place: everything) before
};

template <typename T>
std::unique_ptr<T[]> allocate(size_t count, T fill) {
  std::unique_ptr<T[]> p(count > 0 ? new T[count] : nullptr);
  std::fill_n(p.get(), count, fill);
  return p;
}

template <typename T>
std::vector<T> contents(const BufferView& v) {
  const T* p = reinterpret_cast<const T*>(v.base);
  return std::vector<T>(p, p + v.count);
}

template <typename T>
void setUp(const Case& c, const CollArgs& args, RankMemory<T>& m) {
  const int r = args.rank;
  const size_t sendCount = sendBufferCount(args), recvCount = recvBufferCount(args);
  const bool nonRoot = r != c.root;
  const bool inPlace = c.inPlace && supportsInPlace(c.kind);
  if (!inPlace) {
    bool noSend = c.emptyUnused && nonRoot && c.kind == CollKind::kBroadcast;
    bool noRecv = c.emptyUnused && nonRoot && c.kind == CollKind::kReduce;
    m.sendStoreCount = noSend ? 0 : sendCount;
    m.recvStoreCount = noRecv ? 0 : recvCount;
    m.sendStore = allocate<T>(m.sendStoreCount, sentinel<T>());
    m.recvStore = allocate<T>(m.recvStoreCount, sentinel<T>());
    m.send = viewOf(m.sendStore.get(), m.sendStoreCount);
    m.recv = viewOf(m.recvStore.get(), m.recvStoreCount);
  } else if (c.kind == CollKind::kAllGather) {  // send = recv + rank * count
    m.sendStoreCount = recvCount;
    m.sendStore = allocate<T>(recvCount, sentinel<T>());
    m.recv = viewOf(m.sendStore.get(), recvCount);
    m.send = viewOf(m.sendStore.get() + static_cast<size_t>(r) * c.count, c.count);
  } else if (c.kind == CollKind::kReduceScatter) {  // recv = send + rank * count
    m.sendStoreCount = sendCount;
    m.sendStore = allocate<T>(sendCount, sentinel<T>());
    m.send = viewOf(m.sendStore.get(), sendCount);
    m.recv = viewOf(m.sendStore.get() + static_cast<size_t>(r) * c.count, c.count);
  } else {  // send == recv
    m.sendStoreCount = sendCount;
    m.sendStore = allocate<T>(sendCount, sentinel<T>());
    m.send = m.recv = viewOf(m.sendStore.get(), sendCount);
  }
  T* in = reinterpret_cast<T*>(m.send.base);
  for (size_t i = 0; i < m.send.count; ++i)
    in[i] = inputValue<T>(c.op, r, i);
  m.input = contents<T>(m.send);
  m.recvBefore = contents<T>(m.recv);
  m.storeBefore = contents<T>(viewOf(m.sendStore.get(), m.sendStoreCount));
}

// Element-wise reduction of every rank's input, in rank order.
template <typename T>
std::vector<T> foldInputs(const Case& c, const std::vector<RankMemory<T>>& mem) {
  std::vector<T> out = mem[0].input;
  for (size_t p = 1; p < mem.size(); ++p) {
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = applyOp(c.op, out[i], mem[p].input[i]);
  }
  return out;
}

// What rank r's receive view must hold afterwards. `folded` is foldInputs() for reductions.
template <typename T>
std::vector<T> expected(const Case& c, int r, const std::vector<RankMemory<T>>& mem,
                        const std::vector<T>& folded, const VLayout& v) {
  const int n = c.nranks;
  std::vector<T> out(mem[r].recvBefore);
  const size_t count = c.count, ur = static_cast<size_t>(r);
  switch (c.kind) {
    case CollKind::kBroadcast:
      for (size_t i = 0; i < count; ++i)
        out[i] = mem[c.root].input[i];
      break;
    case CollKind::kReduce:
      if (r != c.root) break;  // untouched
      [[fallthrough]];
    case CollKind::kAllReduce:
      for (size_t i = 0; i < count; ++i)
        out[i] = folded[i];
      break;
    case CollKind::kReduceScatter:
      for (size_t i = 0; i < count; ++i)
        out[i] = folded[ur * count + i];
      break;
    case CollKind::kAllGather:
      for (int p = 0; p < n; ++p) {
        for (size_t i = 0; i < count; ++i)
          out[static_cast<size_t>(p) * count + i] = mem[p].input[i];
      }
      break;
    case CollKind::kAllToAll:
      for (int p = 0; p < n; ++p) {
        for (size_t i = 0; i < count; ++i) {
          out[static_cast<size_t>(p) * count + i] = mem[p].input[ur * count + i];
        }
      }
      break;
    case CollKind::kAllToAllv:
      for (int p = 0; p < n; ++p) {
        for (size_t i = 0; i < v.recvCounts[r][p]; ++i) {
          out[v.recvDispls[r][p] + i] = mem[p].input[v.sendDispls[p][r] + i];
        }
      }
      break;
    case CollKind::kBarrier:
      break;
  }
  return out;
}

template <typename T>
AssertionResult compare(const char* what, int rank, const std::vector<T>& got,
                        const std::vector<T>& want) {
  if (got.size() != want.size()) {
    return AssertionFailure() << "rank " << rank << " " << what << ": size " << got.size()
                              << " != " << want.size();
  }
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] != want[i]) {
      return AssertionFailure() << "rank " << rank << " " << what << "[" << i << "] = " << +got[i]
                                << ", want " << +want[i];
    }
  }
  return AssertionSuccess();
}

template <typename T>
AssertionResult runTyped(const Case& c) {
  const int n = c.nranks;
  const VLayout v = c.kind == CollKind::kAllToAllv ? layoutOf(c.vcounts) : VLayout{};
  std::vector<RankMemory<T>> mem(static_cast<size_t>(n));
  std::vector<Schedule> schedules(static_cast<size_t>(n));
  std::vector<std::vector<BufferView>> buffers(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    CollArgs args;
    args.kind = c.kind;
    args.count = c.count;
    args.root = c.root;
    args.nranks = n;
    args.rank = r;
    if (c.kind == CollKind::kAllToAllv) {
      args.sendCounts = v.sendCounts[r].data();
      args.sendDispls = v.sendDispls[r].data();
      args.recvCounts = v.recvCounts[r].data();
      args.recvDispls = v.recvDispls[r].data();
    }
    setUp(c, args, mem[r]);
    AlgoParams params;
    params.chunkCount = c.chunk;
    Status st = c.build ? c.build(args, params, &schedules[r])
                        : buildSchedule(c.algo, args, params, &schedules[r]);
    if (!st.ok()) return AssertionFailure() << "rank " << r << ": " << st.message();
    mem[r].scratch = allocate<T>(schedules[r].scratchCount, sentinel<T>());
    buffers[r] = {mem[r].send, mem[r].recv,
                  viewOf(mem[r].scratch.get(), schedules[r].scratchCount)};
  }
  ReduceFn fn = reduceFunction(c.type, c.op);
  Status st = simulate(schedules, buffers, fn, SimOptions{c.linkCapacity, c.paceBytes, c.seed});
  if (!st.ok()) return AssertionFailure() << st.message();
  const bool reduces = c.kind == CollKind::kReduce || c.kind == CollKind::kAllReduce ||
                       c.kind == CollKind::kReduceScatter;
  const std::vector<T> folded = reduces ? foldInputs(c, mem) : std::vector<T>{};
  for (int r = 0; r < n; ++r) {
    const RankMemory<T>& m = mem[r];
    AssertionResult ok = compare("recv", r, contents<T>(m.recv), expected(c, r, mem, folded, v));
    if (!ok) return ok;
    // Nothing else the caller owns may change: the input, and in place the rest of the
    // shared buffer.
    std::vector<T> store = contents<T>(viewOf(m.sendStore.get(), m.sendStoreCount));
    const T* recvBegin = reinterpret_cast<const T*>(m.recv.base);
    for (size_t i = 0; i < store.size(); ++i) {
      const T* at = m.sendStore.get() + i;
      bool inRecv = at >= recvBegin && at < recvBegin + m.recv.count;
      if (!inRecv && store[i] != m.storeBefore[i]) {
        return AssertionFailure() << "rank " << r << " send buffer [" << i << "] changed to "
                                  << +store[i];
      }
    }
  }
  return AssertionSuccess();
}

}  // namespace

bool supportsInPlace(CollKind kind) {
  return kind != CollKind::kAllToAll && kind != CollKind::kAllToAllv && kind != CollKind::kBarrier;
}

std::string describe(const Case& c) {
  return strprintf(
      "%s %s nranks=%d count=%zu root=%d %s%s chunk=%zu link=%zu pace=%zu type=%d op=%d seed=%llu",
      algoName(c.algo), collName(c.kind), c.nranks, c.count, c.root,
      c.inPlace ? "in-place" : "out-of-place", c.emptyUnused ? " empty-unused" : "", c.chunk,
      c.linkCapacity, c.paceBytes, static_cast<int>(c.type), static_cast<int>(c.op),
      static_cast<unsigned long long>(c.seed));
}

AssertionResult runCase(const Case& c) {
  switch (c.type) {
    case weftInt32:
      return runTyped<int32_t>(c);
    case weftInt64:
      return runTyped<int64_t>(c);
    case weftFloat32:
      return runTyped<float>(c);
    case weftFloat64:
      return runTyped<double>(c);
    default:
      return AssertionFailure() << "type not covered by the harness";
  }
}

std::vector<std::vector<size_t>> irregularCounts(int nranks, size_t scale) {
  const auto n = static_cast<size_t>(nranks);
  std::vector<std::vector<size_t>> counts(n, std::vector<size_t>(n));
  for (size_t p = 0; p < n; ++p) {
    for (size_t q = 0; q < n; ++q)
      counts[p][q] = (p * 7 + q * 3 + 1) % 5 * scale;
  }
  return counts;
}

}  // namespace weft::test
