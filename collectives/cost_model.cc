#include "collectives/cost_model.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <queue>
#include <tuple>
#include <unordered_map>

#include "collectives/dependencies.h"

namespace weft {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Replaying every rank costs O(ranks x steps); beyond this many ranks the model replays this
// many and scales the result.
constexpr int kMaxReplayRanks = 128;
// The chunk size the model prices with: the library's default chunk (WEFT_CHUNK_BYTES), or
// larger where that keeps a replay cheap without changing the picture. Ring collectives already
// pipeline across their n blocks, so one chunk a block does. Chains and trees need chunks enough
// that filling the pipeline (one chunk per hop) is a small share: four per hop, 16 to 256 in all.
constexpr size_t kDefaultChunkBytes = size_t{1} << 20;

size_t modelChunk(Algo algo, CollKind kind, size_t count, size_t elemSize, int nranks) {
  const size_t def = std::max<size_t>(1, kDefaultChunkBytes / std::max<size_t>(1, elemSize));
  const auto n = static_cast<size_t>(nranks);
  if (algo == Algo::kRing && kind == CollKind::kAllReduce) return std::max(def, chunksIn(count, n));
  if (algo == Algo::kRing && kind != CollKind::kBroadcast && kind != CollKind::kReduce) {
    return std::max<size_t>(def, count);  // per-rank blocks of count elements
  }
  const size_t hops = algo == Algo::kRing ? n - 1 : 2 * static_cast<size_t>(std::bit_width(n - 1));
  return std::max(def, chunksIn(count, std::clamp<size_t>(4 * hops, 16, 256)));
}

// Steps that pair with one on the peer: messages, and memory signals with their waits.
bool isMessage(const Step& s) {
  return s.kind == StepKind::kSend || s.kind == StepKind::kRecv ||
         s.kind == StepKind::kRecvReduce || s.kind == StepKind::kSignal ||
         s.kind == StepKind::kWait;
}
bool isOutgoing(const Step& s) {
  return s.kind == StepKind::kSend || s.kind == StepKind::kSignal;
}

// Dependencies of one rank's steps, as the executor forms them: memory conflicts and fences
// (collectives/dependencies.h), plus the previous message to or from the same peer (FIFO).
// Buffers get disjoint address spaces in element units: the out-of-place case.
std::vector<std::vector<uint32_t>> dependencies(const Schedule& sched) {
  const auto& steps = sched.steps;
  auto at = [](const Ref& r, size_t count) {
    uintptr_t begin = ((static_cast<uintptr_t>(r.buf) + 1) << 40) + r.offset;
    return Footprint::Range{begin, begin + count};
  };
  std::vector<Footprint> footprints;
  footprints.reserve(steps.size());
  for (const Step& s : steps)
    footprints.push_back(footprintOf(s, at));
  Dependencies memory;
  memory.build(footprints);
  std::vector<std::vector<uint32_t>> deps(steps.size());
  // (peer, outgoing, memory signal) -> step
  std::map<std::tuple<int, bool, bool>, uint32_t> lastMessage;
  for (uint32_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    auto mem = memory.of(i);
    std::vector<uint32_t>& d = deps[i];
    d.assign(mem.begin(), mem.end());
    if (isMessage(s)) {
      const auto key = std::make_tuple(s.peer, isOutgoing(s), isMemoryStep(s.kind));
      auto it = lastMessage.find(key);
      if (it != lastMessage.end()) d.push_back(it->second);
      lastMessage[key] = i;
    }
    std::sort(d.begin(), d.end());
    d.erase(std::unique(d.begin(), d.end()), d.end());
  }
  return deps;
}

// Timed replay of all ranks: a discrete-event simulation over steps.
class Replay {
 public:
  Replay(const std::vector<Schedule>& schedules, size_t elemSize, const LinkModel& link)
      : scheds_(schedules),
        elemSize_(elemSize),
        latency_(link.latencyUs),
        bytesPerUs_(std::max(link.bandwidthGBps, 1e-9) * 1e3),
        localBytesPerUs_(std::max(link.localCopyGBps, 1e-9) * 1e3) {}

  double run() {
    const size_t n = scheds_.size();
    ranks_.resize(n);
    txFree_.assign(n, 0);
    rxFree_.assign(n, 0);
    cpuFree_.assign(n, 0);
    size_t total = 0;
    for (size_t r = 0; r < n; ++r) {
      prepare(r);
      total += scheds_[r].steps.size();
    }
    if (!matchMessages()) return kInf;
    for (size_t r = 0; r < n; ++r) {
      for (uint32_t i = 0; i < scheds_[r].steps.size(); ++i) {
        if (ranks_[r].depsLeft[i] == 0) events_.push({0.0, kReady, static_cast<int>(r), i});
      }
    }
    size_t completed = 0;
    double makespan = 0;
    while (!events_.empty()) {
      Event e = events_.top();
      events_.pop();
      if (e.type == kReady) {
        start(e);
      } else {
        ++completed;
        makespan = std::max(makespan, e.time);
        finish(e);
      }
    }
    return completed == total ? makespan : kInf;
  }

 private:
  enum EventType { kComplete = 0, kReady = 1 };  // completions first at equal times
  struct Event {
    double time;
    EventType type;
    int rank;
    uint32_t step;
    bool operator>(const Event& o) const { return time != o.time ? time > o.time : type > o.type; }
  };
  struct RankState {
    std::vector<uint32_t> depsLeft;
    std::vector<double> readyAt;
    std::vector<std::vector<uint32_t>> dependents;
    std::vector<int64_t> match;   // send -> the peer's receive step
    std::vector<double> arrival;  // receive -> when its message is in (-1: not yet)
    std::vector<char> posted;     // receive -> its own dependencies are done
  };

  void prepare(size_t r) {
    const auto& steps = scheds_[r].steps;
    RankState& st = ranks_[r];
    std::vector<std::vector<uint32_t>> deps = dependencies(scheds_[r]);
    st.depsLeft.assign(steps.size(), 0);
    st.readyAt.assign(steps.size(), 0);
    st.dependents.assign(steps.size(), {});
    st.match.assign(steps.size(), -1);
    st.arrival.assign(steps.size(), -1);
    st.posted.assign(steps.size(), 0);
    for (uint32_t i = 0; i < steps.size(); ++i) {
      st.depsLeft[i] = static_cast<uint32_t>(deps[i].size());
      for (uint32_t d : deps[i])
        st.dependents[d].push_back(i);
    }
  }

  // The k-th send from a to b meets the k-th receive at b from a, and the k-th memory signal
  // the k-th wait.
  bool matchMessages() {
    const int n = static_cast<int>(scheds_.size());
    // (from, to, memory) -> steps
    std::map<std::tuple<int, int, bool>, std::vector<uint32_t>> sends, recvs;
    for (int r = 0; r < n; ++r) {
      const auto& steps = scheds_[r].steps;
      for (uint32_t i = 0; i < steps.size(); ++i) {
        const Step& s = steps[i];
        if (!isMessage(s)) continue;
        if (s.peer < 0 || s.peer >= n) return false;
        const bool memory = isMemoryStep(s.kind);
        if (isOutgoing(s)) {
          sends[{r, s.peer, memory}].push_back(i);
        } else {
          recvs[{s.peer, r, memory}].push_back(i);
        }
      }
    }
    for (const auto& [pair, list] : sends) {
      const std::vector<uint32_t>& other = recvs[pair];
      if (other.size() != list.size()) return false;
      for (size_t k = 0; k < list.size(); ++k)
        ranks_[std::get<0>(pair)].match[list[k]] = other[k];
    }
    for (const auto& [pair, list] : recvs) {
      if (sends.find(pair) == sends.end() && !list.empty()) return false;
    }
    return true;
  }

  double bytes(const Step& s) const { return static_cast<double>(s.count * elemSize_); }
  // What a receive costs after its message is in: the reduction of a receive-reduce.
  double afterArrival(const Step& s) const {
    return s.kind == StepKind::kRecvReduce ? bytes(s) / localBytesPerUs_ : 0.0;
  }

  void start(const Event& e) {
    const Step& s = scheds_[e.rank].steps[e.step];
    RankState& st = ranks_[e.rank];
    switch (s.kind) {
      case StepKind::kCopy:
      case StepKind::kReduce:
      // Memory steps move the bytes at memory speed, with the peer's memory as near as this
      // rank's own.
      case StepKind::kPut:
      case StepKind::kGet:
      case StepKind::kGetReduce:
      case StepKind::kPutReduce: {
        double begin = std::max(e.time, cpuFree_[e.rank]);
        cpuFree_[e.rank] = begin + bytes(s) / localBytesPerUs_;
        events_.push({cpuFree_[e.rank], kComplete, e.rank, e.step});
        break;
      }
      case StepKind::kSend:
      case StepKind::kSignal: {
        double begin = std::max(e.time, txFree_[e.rank]);
        double wire = bytes(s) / bytesPerUs_;
        txFree_[e.rank] = begin + wire;
        double in = std::max(begin + latency_, rxFree_[s.peer]) + wire;
        rxFree_[s.peer] = in;
        events_.push({begin + wire, kComplete, e.rank, e.step});
        deliver(s.peer, static_cast<uint32_t>(st.match[e.step]), in);
        break;
      }
      case StepKind::kRecv:
      case StepKind::kRecvReduce:
      case StepKind::kWait:
        st.posted[e.step] = 1;
        st.readyAt[e.step] = e.time;
        if (st.arrival[e.step] >= 0) {
          double at = std::max(e.time, st.arrival[e.step]);
          events_.push({at + afterArrival(s), kComplete, e.rank, e.step});
        }
        break;
    }
  }

  void deliver(int rank, uint32_t step, double in) {
    RankState& st = ranks_[rank];
    st.arrival[step] = in;
    if (!st.posted[step]) return;
    double at = std::max(in, st.readyAt[step]);
    events_.push({at + afterArrival(scheds_[rank].steps[step]), kComplete, rank, step});
  }

  void finish(const Event& e) {
    RankState& st = ranks_[e.rank];
    for (uint32_t d : st.dependents[e.step]) {
      st.readyAt[d] = std::max(st.readyAt[d], e.time);
      if (--st.depsLeft[d] == 0) events_.push({st.readyAt[d], kReady, e.rank, d});
    }
  }

  const std::vector<Schedule>& scheds_;
  size_t elemSize_;
  double latency_, bytesPerUs_, localBytesPerUs_;
  std::vector<RankState> ranks_;
  std::vector<double> txFree_, rxFree_, cpuFree_;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
};

CollKind pricedAs(CollKind kind) {
  return kind == CollKind::kAllToAllv ? CollKind::kAllToAll : kind;
}

std::vector<Schedule> buildAll(Algo algo, CollKind kind, size_t count, size_t elemSize,
                               int nranks) {
  AlgoParams params;
  params.chunkCount = modelChunk(algo, kind, count, elemSize, nranks);
  std::vector<Schedule> out(static_cast<size_t>(nranks));
  for (int r = 0; r < nranks; ++r) {
    CollArgs args;
    args.kind = kind;
    args.count = count;
    args.nranks = nranks;
    args.rank = r;
    if (!buildSchedule(algo, args, params, &out[r]).ok()) return {};
  }
  return out;
}

size_t messagesOfRank0(Algo algo, CollKind kind, size_t count, size_t elemSize, int nranks) {
  AlgoParams params;
  params.chunkCount = modelChunk(algo, kind, count, elemSize, nranks);
  CollArgs args;
  args.kind = kind;
  args.count = count;
  args.nranks = nranks;
  Schedule s;
  if (!buildSchedule(algo, args, params, &s).ok()) return 1;
  return std::max<size_t>(1, std::count_if(s.steps.begin(), s.steps.end(), isMessage));
}

// Prices one algorithm at an exact element count. Past kMaxReplayRanks, scales the replay of
// that many ranks by the growth of rank 0's message count or of the tree depth.
double price(Algo algo, CollKind kind, size_t count, size_t elemSize, int nranks,
             const LinkModel& link) {
  kind = pricedAs(kind);
  if (!algoSupports(algo, kind) || nranks < 1) return kInf;
  const int replayed = std::min(nranks, kMaxReplayRanks);
  std::vector<Schedule> scheds = buildAll(algo, kind, count, elemSize, replayed);
  if (scheds.empty()) return kInf;
  double t = replayUs(scheds, elemSize, link);
  if (replayed < nranks) {
    double messages = static_cast<double>(messagesOfRank0(algo, kind, count, elemSize, nranks)) /
                      static_cast<double>(messagesOfRank0(algo, kind, count, elemSize, replayed));
    double depth = std::log2(nranks) / std::log2(replayed);
    t *= std::max(messages, depth);
  }
  return t;
}

// Sizes are priced at points 0, 1, 2, 4, 8, ... bytes and interpolated in between.
int pointOf(size_t bytes) {
  return bytes == 0 ? 0 : static_cast<int>(std::bit_width(bytes - 1)) + 1;
}
size_t pointBytes(int point) {
  return point == 0 ? 0 : size_t{1} << (point - 1);
}

uint64_t bitsOf(double d) {
  uint64_t b;
  memcpy(&b, &d, sizeof(b));
  return b;
}

struct PriceKey {
  CollKind kind;
  int nranks;
  int point;
  size_t elemSize;
  uint64_t latency, bandwidth, local;
  bool operator==(const PriceKey&) const = default;
};
struct PriceKeyHash {
  size_t operator()(const PriceKey& k) const {
    uint64_t h = static_cast<uint64_t>(k.kind);
    for (uint64_t v : {static_cast<uint64_t>(k.nranks), static_cast<uint64_t>(k.point),
                       static_cast<uint64_t>(k.elemSize), k.latency, k.bandwidth, k.local}) {
      h = (h ^ v) * 0x100000001b3ull + (h >> 29);
    }
    return static_cast<size_t>(h);
  }
};
using Prices = std::array<double, kNumAlgos>;

// The price of every algorithm at one size point, computed once per process.
Prices pricesAt(CollKind kind, int point, size_t elemSize, int nranks, const LinkModel& link) {
  static std::mutex mu;
  static std::unordered_map<PriceKey, Prices, PriceKeyHash> cache;
  const PriceKey key{pricedAs(kind),
                     nranks,
                     point,
                     elemSize,
                     bitsOf(link.latencyUs),
                     bitsOf(link.bandwidthGBps),
                     bitsOf(link.localCopyGBps)};
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  // Priced outside the lock; two threads may both price a new point, harmlessly.
  Prices prices;
  size_t count = chunksIn(pointBytes(point), std::max<size_t>(elemSize, 1));
  for (int a = 0; a < kNumAlgos; ++a) {
    prices[a] = price(static_cast<Algo>(a), kind, count, elemSize, nranks, link);
  }
  std::lock_guard<std::mutex> lock(mu);
  cache.emplace(key, prices);
  return prices;
}

// Every algorithm's prediction at `bytes`, linear between the two surrounding points.
Prices predictAll(CollKind kind, size_t bytes, size_t elemSize, int nranks, const LinkModel& link) {
  if (kind == CollKind::kBarrier) bytes = 0;
  const int hi = pointOf(bytes);
  Prices upper = pricesAt(kind, hi, elemSize, nranks, link);
  if (hi == 0) return upper;
  Prices lower = pricesAt(kind, hi - 1, elemSize, nranks, link);
  const double lo = static_cast<double>(pointBytes(hi - 1));
  const double frac =
      (static_cast<double>(bytes) - lo) / (static_cast<double>(pointBytes(hi)) - lo);
  Prices out;
  for (int a = 0; a < kNumAlgos; ++a) {
    out[a] = std::isinf(upper[a]) || std::isinf(lower[a]) ? kInf
                                                          : lower[a] + (upper[a] - lower[a]) * frac;
  }
  return out;
}

}  // namespace

double replayUs(const std::vector<Schedule>& schedules, size_t elemSize, const LinkModel& link) {
  return Replay(schedules, elemSize, link).run();
}

double predictUs(Algo algo, CollKind kind, size_t bytes, size_t elemSize, int nranks,
                 const LinkModel& link) {
  if (!algoSupports(algo, kind) || nranks < 1) return kInf;
  return predictAll(kind, bytes, elemSize, nranks, link)[static_cast<size_t>(algo)];
}

std::vector<AlgoCandidate> rankAlgos(CollKind kind, size_t bytes, size_t elemSize, int nranks,
                                     const LinkModel& link, const AlgoOverride& allowed) {
  std::vector<AlgoCandidate> out;
  if (nranks < 1) return out;
  Prices prices = predictAll(kind, bytes, elemSize, nranks, link);
  for (int a = 0; a < kNumAlgos; ++a) {
    auto algo = static_cast<Algo>(a);
    if (algoSupports(algo, kind)) out.push_back({algo, prices[a], allowed.allows(kind, algo)});
  }
  std::stable_sort(out.begin(), out.end(), [](const AlgoCandidate& x, const AlgoCandidate& y) {
    return x.predictedUs < y.predictedUs;
  });
  return out;
}

AlgoChoice chooseAlgo(CollKind kind, size_t bytes, size_t elemSize, int nranks,
                      const LinkModel& link, const AlgoOverride& allowed) {
  std::vector<AlgoCandidate> candidates = rankAlgos(kind, bytes, elemSize, nranks, link, allowed);
  for (const AlgoCandidate& c : candidates) {
    if (c.allowed) return {c.algo, c.predictedUs};
  }
  // Nothing allowed (AlgoOverride never does this): the fastest that implements it.
  if (!candidates.empty()) return {candidates.front().algo, candidates.front().predictedUs};
  return {Algo::kRing, kInf};
}

std::string otherAlgos(CollKind kind, size_t bytes, size_t elemSize, int nranks,
                       const LinkModel& link, const AlgoOverride& allowed,
                       std::optional<Algo> chosen) {
  std::string out;
  for (const AlgoCandidate& c : rankAlgos(kind, bytes, elemSize, nranks, link, allowed)) {
    if (c.algo == chosen) continue;
    out += strprintf("%s%s %.1f us%s", out.empty() ? "" : ", ", algoName(c.algo), c.predictedUs,
                     c.allowed ? "" : " (excluded by WEFT_ALGO)");
  }
  return out;
}

std::string explainChoice(CollKind kind, size_t bytes, size_t elemSize, int nranks,
                          const LinkModel& link, const AlgoOverride& allowed) {
  AlgoChoice choice = chooseAlgo(kind, bytes, elemSize, nranks, link, allowed);
  std::string out = strprintf(
      "%s of %zu bytes (%zu-byte elements) on %d ranks; link %.3g us, %.3g GB/s, local %.3g "
      "GB/s\n",
      collName(kind), bytes, elemSize, nranks, link.latencyUs, link.bandwidthGBps,
      link.localCopyGBps);
  for (const AlgoCandidate& c : rankAlgos(kind, bytes, elemSize, nranks, link, allowed)) {
    out += strprintf("  %-14s %12.2f us%s\n", algoName(c.algo), c.predictedUs,
                     c.algo == choice.algo ? "  <- chosen"
                     : c.allowed           ? ""
                                           : "  (excluded by WEFT_ALGO)");
  }
  return out;
}

}  // namespace weft
