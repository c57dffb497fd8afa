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
#include "perf/weft_perf/run_coll.h"
#include "perf/weft_perf/weft_error.h"

namespace weft::perf {
namespace {

constexpr size_t kAlign = 4096;

using Clock = std::chrono::steady_clock;

double secondsBetween(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace

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
    checkWeft(weftMemAlloc(&p, rounded), "weftMemAlloc", r_.comm);
  } else {
    p = std::aligned_alloc(kAlign, rounded);
    if (p == nullptr) throw std::bad_alloc();
  }
  std::memset(p, 0, rounded);  // touch every page now, not inside a timed loop
  return std::unique_ptr<char, Buffer>(static_cast<char*>(p), Buffer{o_.sharedBuffers});
}

Bench::Bench(const Options& o, const Rank& rank, Agreement& agreement, JsonReport* json)
    : o_(o),
      r_(rank),
      agreement_(agreement),
      json_(json),
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
    for (int r = 0; r < r_.nranks; ++r) {
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
// place and in place, the whole sweep -N times (0: until stopped).
void Bench::runCase(const Case& c) {
  agreement_.barrier(r_.thread);
  warmUp(c, o_.maxBytes);
  warmUp(c, o_.minBytes);
  const std::vector<size_t> sizes = sizeList(o_);
  for (int cycle = 0; o_.runCycles == 0 || cycle < o_.runCycles; ++cycle) {
    for (size_t bytes : sizes) {
      runSize(c, bytes);
    }
  }
}

void Bench::runSize(const Case& c, size_t bytes) {
  setSize(c, bytes);
  const RowKey key{reportedBytes(counts_, c.type.size), counts_.paramCount, c.type.name, c.op.name,
                   c.root};
  const Measurement outOfPlace = measure(c, false);
  const Measurement inPlace = measure(c, true);
  print(rowStart(key.bytes, key.count, key.type, key.op, key.root) + rowResult(outOfPlace) +
        rowResult(inPlace) + (outOfPlace.calls ? rowCallTimes(*outOfPlace.calls) : "") + "\n");
  if (json_ != nullptr) json_->record(key, outOfPlace, inPlace);
}

void Bench::warmUp(const Case& c, size_t bytes) {
  setSize(c, bytes);
  for (int i = 0; i < o_.warmupIters; ++i) {
    start(c, false, i);
  }
  complete();
}

void Bench::setSize(const Case& c, size_t bytes) {
  counts_ = collCounts(o_.coll, bytes / c.type.size, r_.nranks);
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
  size_t rank = static_cast<size_t>(r_.rank);
  if (inPlace) {
    send = recv + counts_.sendInplaceOffset * rank * c.type.size;
    recv = recv + counts_.recvInplaceOffset * rank * c.type.size;
  }
  CollCall call{send,   recv,    counts_.paramCount, c.type.type, c.op.op,
                c.root, r_.rank, r_.nranks,          r_.comm,     r_.stream};
  checkWeft(runColl(o_.coll, call), collName(o_.coll), r_.comm);
}

void Bench::complete() {
  // A stream's error is the thread's, not the communicator's.
  if (r_.stream != nullptr) {
    checkWeft(weftStreamSynchronize(r_.stream), "weftStreamSynchronize", nullptr);
  }
}

Measurement Bench::measure(const Case& c, bool inPlace) {
  // A first call outside the timing, then all ranks start together. With weftMemAlloc buffers,
  // one first call in each place the timed calls take: a peer maps and populates the part of a
  // buffer that a call uses when a call first uses it (several microseconds a page on some VMs),
  // as nccl-tests registers its buffers (-R) before it times anything.
  const int calls = o_.iters * o_.aggIters;
  const int first = o_.sharedBuffers ? static_cast<int>(std::min<size_t>(places(c), calls)) : 1;
  for (int iter = 0; iter < first; ++iter)
    start(c, inPlace, iter);
  complete();
  agreement_.barrier(r_.thread);

  perCall_.clear();  // with --percentiles: each iteration's seconds
  perCall_.reserve(static_cast<size_t>(o_.iters));
  const Clock::time_point t0 = Clock::now();
  for (int iter = 0; iter < o_.iters; ++iter) {
    const Clock::time_point began = o_.percentiles ? Clock::now() : t0;
    if (o_.aggIters > 1) checkWeft(weftGroupStart(), "weftGroupStart", r_.comm);
    for (int a = 0; a < o_.aggIters; ++a) {
      start(c, inPlace, iter * o_.aggIters + a);
    }
    if (o_.aggIters > 1) checkWeft(weftGroupEnd(), "weftGroupEnd", r_.comm);
    if (o_.percentiles) {
      complete();
      perCall_.push_back(secondsBetween(began, Clock::now()) / o_.aggIters);
    }
  }
  const Clock::time_point returned = Clock::now();
  complete();
  const Times t =
      acrossRanks({secondsBetween(t0, Clock::now()) / calls, secondsBetween(t0, returned) / calls});

  Measurement m;
  if (o_.percentiles && !inPlace) {
    m.calls = callTimes(agreement_.combine(r_.thread, perCall_, Agreement::Combine::kMax));
  }
  m.seconds = o_.reportCpuTime ? t.returned : t.completed;
  m.bw = bandwidth(o_.coll, counts_.paramCount, c.type.size, t.completed, r_.nranks);
  if (o_.check > 0 && (!inPlace || collChecksInPlace(o_.coll))) {
    Wrong w;
    for (int i = 0; i < o_.check && w.mine == 0 && w.total == 0; ++i) {
      w = validate(c, inPlace);
    }
    // This rank's own count fails its run even where the sum the row shows would hide it.
    if (w.mine != 0 || w.total != 0) ++failed_;
    m.wrong = w.total;
  }
  busBwSum_ += m.bw.busBw;
  ++results_;
  return m;
}

// The times every rank reports, by -a: by default the average over the ranks.
Bench::Times Bench::acrossRanks(Times mine) {
  using Combine = Agreement::Combine;
  Combine how = Combine::kMax;
  switch (o_.timeAcrossRanks) {
    case TimeAcrossRanks::kRank0:
      how = Combine::kRank0;
      break;
    case TimeAcrossRanks::kAverage:
      how = Combine::kSum;
      break;
    case TimeAcrossRanks::kMin:
      how = Combine::kMin;
      break;
    case TimeAcrossRanks::kMax:
      break;
  }
  std::vector<double> t = agreement_.combine(r_.thread, {mine.completed, mine.returned}, how);
  if (how == Combine::kSum) {
    for (double& v : t) {
      v /= r_.nranks;
    }
  }
  return {t[0], t[1]};
}

// One more call on generated inputs. A rank that finds wrong elements says so on stderr itself:
// the sum over ranks goes through Weft too, which may be what is broken.
Bench::Wrong Bench::validate(const Case& c, bool inPlace) {
  CheckSpec spec{o_.coll, c.type.type, c.op.op, r_.nranks, c.root, ++seed_};
  size_t ts = c.type.size;
  size_t rank = static_cast<size_t>(r_.rank);
  char* recv = recv_.get();
  char* input = send_.get();
  char* output = recv;
  if (inPlace) {
    input = recv + counts_.sendInplaceOffset * rank * ts;
    output = recv + counts_.recvInplaceOffset * rank * ts;
  }
  fillPoison(c.type.type, output, counts_.recvCount * ts);  // then the input, which it may hold
  fillInput(spec, r_.rank, input, counts_.sendCount);
  size_t n = expectedCount(spec, r_.rank, counts_);
  fillExpected(spec, r_.rank, counts_, expected_.get());

  start(c, inPlace, 0);
  complete();
  Wrong w;
  w.mine = countWrong(spec, output, expected_.get(), n) +
           countDisturbed(spec, r_.rank, counts_, input, output, inPlace);
  if (w.mine != 0) {
    std::fprintf(stderr, "weft-perf: rank %d: %lld wrong elements in %s %s %s, %zu elements%s\n",
                 r_.rank, static_cast<long long>(w.mine), collName(o_.coll), c.type.name, c.op.name,
                 counts_.paramCount, inPlace ? ", in place" : "");
  }
  // Exact as a double: no buffer holds 2^53 elements.
  const std::vector<double> mine = {static_cast<double>(w.mine)};
  w.total = static_cast<int64_t>(agreement_.combine(r_.thread, mine, Agreement::Combine::kSum)[0]);
  return w;
}

void Bench::print(const std::string& text) const {
  if (r_.rank == 0) std::fputs(text.c_str(), stdout);
}

}  // namespace weft::perf
