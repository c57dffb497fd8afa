#include "perf/weft_perf/bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "perf/weft_perf/check.h"
#include "perf/weft_perf/report.h"
#include "perf/weft_perf/run_coll.h"

namespace weft::perf {
namespace {

constexpr size_t kAlign = 4096;

}  // namespace

void checkWeft(weftResult_t result, const char* call, weftComm_t comm) {
  if (result == weftSuccess) return;
  throw WeftError(std::string(call) + " failed: " + weftGetErrorString(result) + ": " +
                  weftGetLastError(comm));
}

void Bench::Buffer::operator()(char* p) const {
  if (shared) {
    weftMemFree(p);
  } else {
    std::free(p);
  }
}

std::unique_ptr<char, Bench::Buffer> Bench::allocate(size_t bytes) const {
  size_t rounded = (std::max<size_t>(bytes, 1) + kAlign - 1) / kAlign * kAlign;
  void* p = nullptr;
  if (o_.sharedBuffers) {
    checkWeft(weftMemAlloc(&p, rounded), "weftMemAlloc", comm_);
  } else {
    p = std::aligned_alloc(kAlign, rounded);
    if (p == nullptr) throw std::bad_alloc();
  }
  std::memset(p, 0, rounded);  // touch every page now, not inside a timed loop
  return std::unique_ptr<char, Buffer>(static_cast<char*>(p), Buffer{o_.sharedBuffers});
}

Bench::Bench(const Options& o, weftComm_t comm, weftStream_t stream, int rank, int nranks)
    : o_(o),
      comm_(comm),
      stream_(stream),
      rank_(rank),
      nranks_(nranks),
      bufferBytes_(o.maxBytes),
      send_(allocate(o.maxBytes)),
      recv_(allocate(o.maxBytes)),
      expected_(o.check > 0 ? allocate(o.maxBytes)
                            : std::unique_ptr<char, Buffer>(nullptr, Buffer{false})) {}

Bench::~Bench() = default;

Summary Bench::run() {
  // Only the collectives that take them loop over operations and roots.
  std::vector<OpInfo> ops = collHasOp(o_.coll) ? o_.ops : std::vector<OpInfo>{{weftSum, "none"}};
  std::vector<int> roots = {-1};
  if (collHasRoot(o_.coll)) {
    roots.clear();
    for (int r = 0; r < nranks_; ++r) {
      if (o_.root == -1 || o_.root == r) roots.push_back(r);
    }
  }
  for (const TypeInfo& type : o_.types) {
    for (const OpInfo& op : ops) {
      for (int root : roots) {
        runCase(Case{type, op, root});
      }
    }
  }
  return Summary{failed_, results_ ? busBwSum_ / results_ : 0};
}

// nccl-tests: warm up at the largest and the smallest size, then measure every size out of
// place and in place.
void Bench::runCase(const Case& c) {
  barrier();
  warmUp(c, o_.maxBytes);
  warmUp(c, o_.minBytes);
  for (size_t bytes : sizeList(o_)) {
    setSize(c, bytes);
    print(rowStart(reportedBytes(counts_, c.type.size), counts_.paramCount, c.type.name, c.op.name,
                   c.root));
    measure(c, false);
    measure(c, true);
    print("\n");
  }
}

void Bench::warmUp(const Case& c, size_t bytes) {
  setSize(c, bytes);
  for (int i = 0; i < o_.warmupIters; ++i) {
    start(c, false, i);
  }
  complete();
}

void Bench::setSize(const Case& c, size_t bytes) {
  counts_ = collCounts(o_.coll, bytes / c.type.size, nranks_);
}

size_t Bench::places(const Case& c) const {
  size_t total = reportedBytes(counts_, c.type.size);
  return total ? std::max<size_t>(bufferBytes_ / total, 1) : 1;
}

// One call. Successive iterations move through the buffer, as nccl-tests does, so that a
// small size is not always served from the same cache lines.
void Bench::start(const Case& c, bool inPlace, int iter) {
  size_t shift = reportedBytes(counts_, c.type.size) * (static_cast<size_t>(iter) % places(c));
  char* send = send_.get() + shift;
  char* recv = recv_.get() + shift;
  size_t rank = static_cast<size_t>(rank_);
  if (inPlace) {
    send = recv + counts_.sendInplaceOffset * rank * c.type.size;
    recv = recv + counts_.recvInplaceOffset * rank * c.type.size;
  }
  CollCall call{send,  recv,   counts_.paramCount, c.type.type, c.op.op, c.root, rank_, nranks_,
                comm_, stream_};
  checkWeft(runColl(o_.coll, call), collName(o_.coll), comm_);
}

void Bench::complete() {
  if (stream_ != nullptr) checkWeft(weftStreamSynchronize(stream_), "weftStreamSynchronize", comm_);
}

void Bench::barrier() {
  checkWeft(weftBarrier(comm_, nullptr), "weftBarrier", comm_);
}

void Bench::measure(const Case& c, bool inPlace) {
  if (inPlace && !collRunsInPlace(o_.coll)) {
    print(rowNotRun());
    return;
  }
  // A first call outside the timing, then all ranks start together. With weftMemAlloc buffers,
  // one first call in each place the timed calls take: a peer maps and populates the part of a
  // buffer that a call uses when a call first uses it (several microseconds a page on some VMs),
  // as nccl-tests registers its buffers (-R) before it times anything.
  const int calls = o_.iters * o_.aggIters;
  const int first = o_.sharedBuffers ? static_cast<int>(std::min<size_t>(places(c), calls)) : 1;
  for (int iter = 0; iter < first; ++iter)
    start(c, inPlace, iter);
  complete();
  barrier();

  auto t0 = std::chrono::steady_clock::now();
  for (int iter = 0; iter < o_.iters; ++iter) {
    if (o_.aggIters > 1) checkWeft(weftGroupStart(), "weftGroupStart", comm_);
    for (int a = 0; a < o_.aggIters; ++a) {
      start(c, inPlace, iter * o_.aggIters + a);
    }
    if (o_.aggIters > 1) checkWeft(weftGroupEnd(), "weftGroupEnd", comm_);
  }
  complete();
  std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - t0;
  double seconds = acrossRanks(elapsed.count() / (o_.iters * o_.aggIters));
  Bandwidth bw = bandwidth(o_.coll, counts_.paramCount, c.type.size, seconds, nranks_);

  std::optional<int64_t> wrong;
  if (o_.check > 0 && (!inPlace || collChecksInPlace(o_.coll))) {
    Wrong w;
    for (int i = 0; i < o_.check && w.mine == 0 && w.total == 0; ++i) {
      w = validate(c, inPlace);
    }
    // This rank's own count fails its run even where the sum the row shows would hide it.
    if (w.mine != 0 || w.total != 0) ++failed_;
    wrong = w.total;
  }
  print(rowResult(seconds, bw, wrong));
  busBwSum_ += bw.busBw;
  ++results_;
}

// The time all ranks report: by default the slowest rank's, so that every rank agrees.
double Bench::acrossRanks(double seconds) {
  double v = seconds;
  switch (o_.timeAcrossRanks) {
    case TimeAcrossRanks::kRank0:
      checkWeft(weftBroadcast(&v, &v, 1, weftFloat64, 0, comm_, nullptr), "weftBroadcast", comm_);
      return v;
    case TimeAcrossRanks::kAverage:
      checkWeft(weftAllReduce(&v, &v, 1, weftFloat64, weftSum, comm_, nullptr), "weftAllReduce",
                comm_);
      return v / nranks_;
    case TimeAcrossRanks::kMin:
      checkWeft(weftAllReduce(&v, &v, 1, weftFloat64, weftMin, comm_, nullptr), "weftAllReduce",
                comm_);
      return v;
    case TimeAcrossRanks::kMax:
      break;
  }
  checkWeft(weftAllReduce(&v, &v, 1, weftFloat64, weftMax, comm_, nullptr), "weftAllReduce", comm_);
  return v;
}

// One more call on generated inputs. A rank that finds wrong elements says so on stderr itself:
// the sum over ranks goes through Weft's own all-reduce, which may be what is broken.
Bench::Wrong Bench::validate(const Case& c, bool inPlace) {
  CheckSpec spec{o_.coll, c.type.type, c.op.op, nranks_, c.root, ++seed_};
  size_t ts = c.type.size;
  size_t rank = static_cast<size_t>(rank_);
  char* recv = recv_.get();
  char* input = send_.get();
  char* output = recv;
  if (inPlace) {
    input = recv + counts_.sendInplaceOffset * rank * ts;
    output = recv + counts_.recvInplaceOffset * rank * ts;
  }
  fillPoison(c.type.type, output, counts_.recvCount * ts);  // then the input, which it may hold
  fillInput(spec, rank_, input, counts_.sendCount);
  size_t n = expectedCount(spec, rank_, counts_);
  fillExpected(spec, rank_, counts_, expected_.get());

  start(c, inPlace, 0);
  complete();
  Wrong w;
  w.mine = countWrong(spec, output, expected_.get(), n) +
           countDisturbed(spec, rank_, counts_, input, output, inPlace);
  if (w.mine != 0) {
    std::fprintf(stderr, "weft-perf: rank %d: %lld wrong elements in %s %s %s, %zu elements%s\n",
                 rank_, static_cast<long long>(w.mine), collName(o_.coll), c.type.name, c.op.name,
                 counts_.paramCount, inPlace ? ", in place" : "");
  }
  w.total = w.mine;
  checkWeft(weftAllReduce(&w.total, &w.total, 1, weftInt64, weftSum, comm_, nullptr),
            "weftAllReduce", comm_);
  return w;
}

void Bench::print(const std::string& text) const {
  if (rank_ == 0) std::fputs(text.c_str(), stdout);
}

}  // namespace weft::perf
