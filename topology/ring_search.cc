#include "topology/ring_search.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "topology/bandwidth.h"
#include "topology/channel_model.h"
#include "topology/cpu_ranks.h"
#include "topology/locality.h"

namespace weft::topo {
namespace {

constexpr double kEpsilon = 1e-6;
constexpr long kBudget = 200000;  // DFS steps per ring searched

// Which next rank the search tries first.
enum class Strategy {
  kMostRemaining,  // the hop with the most bandwidth left
  kWidestLink,     // the hop whose links are widest on an idle machine
  kTightestFit,    // the hop with the least bandwidth left that still fits (packs links full)
};

struct Candidate {
  std::vector<int> order;
  int nicIn = -1, nicOut = -1;
};

// How many rings already enter and leave by each NIC, so later rings pick the least used.
struct NicUses {
  std::map<int, int> in, out;
  // Rings counted in `uses` for `nic` (0 if none yet).
  static int of(const std::map<int, int>& uses, int nic) {
    auto it = uses.find(nic);
    return it == uses.end() ? 0 : it->second;
  }
};

// What the hops inside a host go through, in words: NVLink, a PCIe switch, or the CPUs.
std::string explainHops(const std::vector<PathClass>& hops, bool systemHasSwitch) {
  int nvlink = 0, local = 0, cpu = 0, cross = 0;
  for (PathClass p : hops) {
    nvlink += p == PathClass::kNvl || p == PathClass::kNvb;
    local += p == PathClass::kPix || p == PathClass::kPxb;
    cpu += p == PathClass::kPhb || p == PathClass::kNode || p == PathClass::kSys;
    cross += p == PathClass::kSys;
  }
  std::string out;
  if (nvlink > 0) out = strprintf("%d of %zu hops over NVLink", nvlink, hops.size());
  if (local > 0) {
    out += out.empty() ? strprintf("%d of %zu hops", local, hops.size()) : strprintf(", %d", local);
    out += " stay below a PCIe switch";
  }
  if (cpu > 0 && out.empty()) {
    out = systemHasSwitch ? "no two neighbours share a PCIe switch: every hop goes through a CPU"
                          : "no PCIe switch in this system: every hop goes through a CPU";
  } else if (cpu > cross) {
    out += strprintf(", %d through a CPU", cpu - cross);
  }
  if (cross > 0) out += strprintf(", %d between CPUs", cross);
  return out;
}

// A ring with the same ranks, order and NICs as an earlier one is not a mistake but another
// channel over the same path; says so in its `why`, so that the plan does not look repeated.
// `worker` is what drives a channel ("GPU block", "CPU thread").
void noteRepeatedPaths(std::vector<Ring>* rings, const char* worker) {
  for (size_t i = 1; i < rings->size(); ++i) {
    Ring& r = (*rings)[i];
    for (size_t j = 0; j < i; ++j) {
      const Ring& e = (*rings)[j];
      if (r.order != e.order || r.nicIn != e.nicIn || r.nicOut != e.nicOut) continue;
      r.why += strprintf(
          "; ring %zu's path again: one more channel (a %s of its own) with its share of the data",
          j, worker);
      break;
    }
  }
}

class Search {
 public:
  Search(const System& s, const Paths& p, const RankSet& r, int hosts, const ChannelOptions& o)
      : s_(s),
        hops_(s, p, r),
        ranks_(r),
        hosts_(hosts),
        opt_(o),
        n_(static_cast<int>(r.nodes.size())),
        idle_(s) {
    nicOf_ = assignNics(s, p, r.nodes);
    if (hosts_ > 1) nics_ = s.nics();
  }

  Status run(RingPlan* plan) {
    plan->ranks = ranks_;
    plan->hosts = hosts_;
    plan->nicOfRank = nicOf_;
    if (hosts_ > 1 && nics_.empty()) {
      return errorf(weftInvalidArgument, "%d hosts need a NIC, and the system has none", hosts_);
    }
    if (ranks_.cpu) return cpuRings(plan);
    // 1. The best ring, and the best class that reaches it.
    double best = 0;
    Candidate bestRing;
    for (double speed : bestCandidates()) {
      Capacity cap(s_);
      Candidate c;
      if (find(speed, PathClass::kNet, &cap, &c)) {
        best = speed;
        bestRing = c;
        break;
      }
    }
    if (best <= 0) {
      return errorf(weftInvalidArgument, "no ring joins the %d ranks (some pair has no path)", n_);
    }
    PathClass bestClass = PathClass::kNet;
    for (int c = static_cast<int>(PathClass::kLoc); c <= static_cast<int>(PathClass::kNet); ++c) {
      Capacity cap(s_);
      Candidate found;
      if (find(best, static_cast<PathClass>(c), &cap, &found)) {
        bestClass = static_cast<PathClass>(c);
        break;
      }
    }
    plan->best = best;
    plan->bestClass = bestClass;
    // 2. Channels.
    double top = std::min(best, opt_.channelCap);
    double bestTotal = -1;
    std::vector<Candidate> chosen;
    double chosenSpeed = 0;
    for (int k = 1; k <= opt_.maxChannels; ++k) {
      double speed = top / k;
      if (speed * opt_.maxChannels < bestTotal - kEpsilon) break;
      // Greedy packing is not optimal; a few orders of preference, keeping the one that fits
      // the most rings.
      std::vector<Candidate> rings;
      for (Strategy strategy :
           {Strategy::kMostRemaining, Strategy::kWidestLink, Strategy::kTightestFit}) {
        strategy_ = strategy;
        std::vector<Candidate> tried;
        Capacity cap(s_);
        while (static_cast<int>(tried.size()) < opt_.maxChannels) {
          Candidate c;
          if (!find(speed, bestClass, &cap, &c, &nicUses_)) break;
          commit(c, speed, &cap);
          tried.push_back(c);
        }
        nicUses_ = NicUses();
        if (tried.size() > rings.size()) rings = tried;
      }
      strategy_ = Strategy::kMostRemaining;
      double total = speed * static_cast<double>(rings.size());
      bool better = total > bestTotal + kEpsilon;
      bool tie = std::fabs(total - bestTotal) <= kEpsilon;
      bool tieReachingMin =
          tie && static_cast<int>(chosen.size())<opt_.minChannels&& static_cast<int>(
                     rings.size())> static_cast<int>(chosen.size());
      // Across hosts, as much bandwidth over more NICs spreads the network traffic.
      bool tieSpreading = tie && hosts_ > 1 && nicsUsed(rings) > nicsUsed(chosen);
      if (better || tieReachingMin || tieSpreading) {
        bestTotal = total;
        chosen = rings;
        chosenSpeed = speed;
      }
    }
    for (const Candidate& c : chosen)
      plan->rings.push_back(describe(c, chosenSpeed, chosen.size()));
    noteRepeatedPaths(&plan->rings, ranks_.cpu ? "CPU thread" : "GPU block");
    plan->summary = strprintf(
        "%zu channel(s) x %s = %s; best ring bottleneck %s with hops of "
        "class %s or better",
        chosen.size(), formatBandwidth(chosenSpeed).c_str(), formatBandwidth(bestTotal).c_str(),
        formatBandwidth(best).c_str(), toString(bestClass));
    return okStatus();
  }

 private:
  // Speeds to try for the best ring: every path bandwidth a ring could be limited by, divided
  // by how often a ring could cross that link.
  std::vector<double> bestCandidates() const {
    std::vector<double> values;
    std::vector<double> base;
    for (const Link& l : s_.links)
      base.push_back(l.bw);
    for (int nic : nics_)
      base.push_back(nicBandwidth(s_, nic));
    std::sort(base.begin(), base.end());
    base.erase(std::unique(base.begin(), base.end()), base.end());
    for (double b : base) {
      for (int k = 1; k <= std::max(2, n_); ++k)
        values.push_back(b / k);
    }
    std::sort(values.rbegin(), values.rend());
    std::vector<double> out;
    for (double v : values) {
      if (out.empty() || out.back() - v > kEpsilon) out.push_back(v);
    }
    return out;
  }

  Hop hopOf(int a, int b) const { return hops_.between(a, b); }

  // How many NICs rings enter by, plus how many they leave by.
  static size_t nicsUsed(const std::vector<Candidate>& rings) {
    std::set<int> in, out;
    for (const Candidate& c : rings) {
      in.insert(c.nicIn);
      out.insert(c.nicOut);
    }
    return in.size() + out.size();
  }

  // One ring at `speed` on what `cap` has left, with no hop worse than `maxClass`.
  bool find(double speed, PathClass maxClass, Capacity* cap, Candidate* out,
            NicUses* uses = nullptr) {
    budget_ = kBudget;
    maxClass_ = maxClass;
    speed_ = speed;
    cap_ = cap;
    if (n_ == 1 && hosts_ == 1) {
      out->order = {0};
      return true;
    }
    if (hosts_ == 1) {
      std::vector<int> order{0};
      std::vector<char> used(static_cast<size_t>(n_), 0);
      used[0] = 1;
      if (!dfs(&order, &used, -1)) return false;
      out->order = order;
      return true;
    }
    // Across hosts the ring is a chain per host: in by a NIC at a rank next to it, out at a
    // rank by the NIC next to that rank. Both ends are fixed first, from the least used entry
    // and exit NICs, so that the rings spread over all NICs both ways.
    NicUses none;
    const NicUses& u = uses ? *uses : none;
    std::vector<int> nics = nics_;
    std::stable_sort(nics.begin(), nics.end(),
                     [&](int a, int b) { return NicUses::of(u.in, a) < NicUses::of(u.in, b); });
    for (int nic : nics) {
      for (int start = 0; start < n_; ++start) {
        if (nicOf_[static_cast<size_t>(start)] != nic) continue;
        Hop in = hops_.fromNet(nic, start);
        if (!in.exists || !cap_->take(in, speed)) continue;
        for (int end : exitOrder(start, u.out)) {
          Candidate c;
          if (chain(start, end, &c.order)) {
            c.nicIn = nic;
            c.nicOut = nicOf_[static_cast<size_t>(end)];
            cap_->give(in, speed);
            if (uses) {
              ++uses->in[c.nicIn];
              ++uses->out[c.nicOut];
            }
            *out = c;
            return true;
          }
          if (budget_ <= 0) break;
        }
        cap_->give(in, speed);
        if (budget_ <= 0) return false;
      }
    }
    return false;
  }

  // The ranks a ring entering at `start` may leave from: those whose NIC has sent the fewest
  // rings first, then the farthest from `start` (a chain whose ends are on different sockets
  // crosses between them once, not twice).
  std::vector<int> exitOrder(int start, const std::map<int, int>& outUses) const {
    std::vector<int> ends;
    for (int r = 0; r < n_; ++r) {
      if (r != start || n_ == 1) ends.push_back(r);
    }
    auto key = [&](int r) {
      int used = NicUses::of(outUses, nicOf_[static_cast<size_t>(r)]);
      int near = r == start ? 0 : -static_cast<int>(hopOf(start, r).cls);
      return std::make_tuple(used, near, r);
    };
    std::sort(ends.begin(), ends.end(), [&](int a, int b) { return key(a) < key(b); });
    return ends;
  }

  // A chain from `start` to `end` through every rank, leaving by the NIC next to `end`.
  bool chain(int start, int end, std::vector<int>* order) {
    Hop out = hops_.toNet(end, nicOf_[static_cast<size_t>(end)]);
    if (!out.exists || !cap_->take(out, speed_)) return false;
    *order = {start};
    std::vector<char> used(static_cast<size_t>(n_), 0);
    used[static_cast<size_t>(start)] = 1;
    used[static_cast<size_t>(end)] = 1;  // kept for last
    bool ok = n_ == 1 || dfs(order, &used, end);
    cap_->give(out, speed_);
    return ok;
  }

  // Extends `order` to all ranks; on success the capacity taken is given back (commit takes it).
  // Within a host (`end` < 0) the last rank closes the ring to the first; across hosts the
  // chain must finish at `end`, whose exit to the network the caller has checked.
  bool dfs(std::vector<int>* order, std::vector<char>* used, int end) {
    if (--budget_ < 0) return false;
    int cur = order->back();
    int placed = static_cast<int>(order->size());
    if (placed == n_) {
      Hop close = hopOf(cur, order->front());
      if (!close.exists || close.cls > maxClass_) return false;
      if (!cap_->take(close, speed_)) return false;
      cap_->give(close, speed_);
      return true;
    }
    if (end >= 0 && placed == n_ - 1) {
      const Hop& h = hopOf(cur, end);
      if (!h.exists || h.cls > maxClass_ || !cap_->take(h, speed_)) return false;
      cap_->give(h, speed_);
      order->push_back(end);
      return true;
    }
    std::vector<int> next;
    for (int r = 0; r < n_; ++r) {
      if ((*used)[static_cast<size_t>(r)]) continue;
      const Hop& h = hops_.between(cur, r);
      if (!h.exists || h.cls > maxClass_) continue;
      next.push_back(r);
    }
    std::stable_sort(next.begin(), next.end(), [&](int a, int b) {
      const Hop &x = hops_.between(cur, a), &y = hops_.between(cur, b);
      double rx = cap_->remaining(x), ry = cap_->remaining(y);
      if (strategy_ == Strategy::kWidestLink) {
        double wx = idle_.remaining(x), wy = idle_.remaining(y);
        if (std::fabs(wx - wy) > kEpsilon) return wx > wy;
      }
      if (strategy_ == Strategy::kTightestFit && std::fabs(rx - ry) > kEpsilon) return rx < ry;
      if (std::fabs(rx - ry) > kEpsilon) return rx > ry;
      if (x.cls != y.cls) return x.cls < y.cls;
      return x.dlinks.size() < y.dlinks.size();
    });
    for (int r : next) {
      const Hop& h = hops_.between(cur, r);
      if (!cap_->take(h, speed_)) continue;
      order->push_back(r);
      (*used)[static_cast<size_t>(r)] = 1;
      bool ok = dfs(order, used, end);
      cap_->give(h, speed_);
      if (ok) return true;
      order->resize(static_cast<size_t>(placed));
      (*used)[static_cast<size_t>(r)] = 0;
      if (budget_ < 0) return false;
    }
    return false;
  }

  std::vector<Hop> hopsOf(const Candidate& c) const {
    std::vector<Hop> out;
    int n = static_cast<int>(c.order.size());
    if (hosts_ > 1) out.push_back(hops_.fromNet(c.nicIn, c.order.front()));
    for (int i = 0; i + 1 < n; ++i)
      out.push_back(hopOf(c.order[static_cast<size_t>(i)], c.order[static_cast<size_t>(i) + 1]));
    if (hosts_ > 1) {
      out.push_back(hops_.toNet(c.order.back(), c.nicOut));
    } else if (n > 1) {
      out.push_back(hopOf(c.order.back(), c.order.front()));
    }
    return out;
  }

  void commit(const Candidate& c, double speed, Capacity* cap) {
    for (const Hop& h : hopsOf(c))
      cap->take(h, speed);
  }

  Ring describe(const Candidate& c, double speed, size_t channels) const {
    Ring ring;
    ring.order = c.order;
    ring.bw = speed;
    ring.nicIn = c.nicIn;
    ring.nicOut = c.nicOut;
    std::vector<Hop> hops = hopsOf(c);
    std::vector<const Hop*> ptrs;
    ptrs.reserve(hops.size());
    for (const Hop& h : hops)
      ptrs.push_back(&h);
    Bottleneck b = channelBottleneck(s_, ptrs);
    ring.bottleneck = b.bw;
    ring.bottleneckLink = b.what;
    size_t first = hosts_ > 1 ? 1 : 0;
    size_t end = hosts_ > 1 ? hops.size() - 1 : hops.size();
    bool viaSwitch = false;
    for (size_t i = first; i < end; ++i) {
      ring.hops.push_back(hops[i].cls);
      for (int d : hops[i].dlinks) {
        const Link& l = s_.links[static_cast<size_t>(d / 2)];
        viaSwitch |= s_.nodes[static_cast<size_t>(l.a)].kind == NodeKind::kNvSwitch ||
                     s_.nodes[static_cast<size_t>(l.b)].kind == NodeKind::kNvSwitch;
      }
    }
    if (hosts_ > 1) ring.hops.push_back(PathClass::kNet);
    std::string why;
    bool allNvl =
        !ring.hops.empty() && std::all_of(ring.hops.begin(), ring.hops.end(), [&](PathClass p) {
          return p == PathClass::kNvl || p == PathClass::kNet;
        });
    if (n_ == 1) {
      why = "one rank per host";
    } else if (allNvl && viaSwitch) {
      why = "every hop over NVLink through the NVSwitch";
    } else if (allNvl) {
      why = "follows NVLink edges only";
    } else {
      std::vector<PathClass> inside(ring.hops.begin(), ring.hops.end() - (hosts_ > 1 ? 1 : 0));
      why = explainHops(inside, s_.count(NodeKind::kPciSwitch) > 0);
    }
    why += " (" + describeHops(ring.hops) + ")";
    if (hosts_ > 1) {
      const System& s = s_;
      why += "; enters by " + s.nodes[static_cast<size_t>(c.nicIn)].name + " next to " +
             ranks_.label(s, c.order.front()) + ", leaves by " +
             s.nodes[static_cast<size_t>(c.nicOut)].name + " next to " +
             ranks_.label(s, c.order.back());
    }
    why += strprintf("; bottleneck %s", b.what.c_str());
    if (channels > 1 && speed < b.bw - kEpsilon) {
      why += ", shared: " + formatBandwidth(speed) + " for this channel";
    } else if (speed < b.bw - kEpsilon) {
      why += ", capped at " + formatBandwidth(speed) + " per channel";
    }
    ring.why = why;
    return ring;
  }

  // CPU ranks: the NUMA-aware order, once per channel. Across hosts, channel k starts k ranks
  // into each NUMA node's block, so its ends (and their NICs) differ from the other channels'.
  Status cpuRings(RingPlan* plan) {
    std::vector<int> order = orderCpuRanks(s_, ranks_.numaOfRank);
    int channels = std::max(1, std::min(opt_.minChannels, opt_.maxChannels));
    std::vector<Candidate> rings;
    std::vector<std::vector<Hop>> hops;
    for (int k = 0; k < channels; ++k) {
      Candidate c;
      c.order = hosts_ > 1 ? rotateNumaBlocks(order, k) : order;
      if (hosts_ > 1) {
        c.nicIn = nicOf_[static_cast<size_t>(c.order.front())];
        c.nicOut = nicOf_[static_cast<size_t>(c.order.back())];
        if (c.nicIn < 0 || c.nicOut < 0) {
          return errorf(weftInvalidArgument, "no NIC is reachable from the ranks' NUMA nodes");
        }
      }
      hops.push_back(hopsOf(c));
      for (const Hop& h : hops.back()) {
        if (!h.exists) return errorf(weftInvalidArgument, "no path joins two NUMA nodes");
      }
      rings.push_back(c);
    }
    // What each channel gets when all run at once: links and ports they share are split.
    std::vector<const Hop*> all;
    for (const std::vector<Hop>& hs : hops) {
      for (const Hop& h : hs)
        all.push_back(&h);
    }
    Bottleneck shared = channelBottleneck(s_, all);
    plan->bestClass = PathClass::kLoc;
    for (size_t k = 0; k < rings.size(); ++k) {
      const Candidate& c = rings[k];
      Ring ring = describe(c, shared.bw, rings.size());
      plan->best = std::max(plan->best, ring.bottleneck);
      for (PathClass p : ring.hops)
        plan->bestClass = worse(plan->bestClass, p);
      int crossings =
          static_cast<int>(std::count(ring.hops.begin(), ring.hops.end(), PathClass::kSys));
      ring.why = "ranks grouped by socket and NUMA node: ";
      ring.why += crossings == 0
                      ? std::string("the ring stays on one NUMA node")
                      : strprintf("the ring crosses between NUMA nodes %d time(s)", crossings);
      ring.why += " (" + describeHops(ring.hops) + ")";
      if (hosts_ > 1) {
        ring.why += "; enters by " + s_.nodes[static_cast<size_t>(c.nicIn)].name + " next to " +
                    ranks_.label(s_, c.order.front()) + ", leaves by " +
                    s_.nodes[static_cast<size_t>(c.nicOut)].name + " next to " +
                    ranks_.label(s_, c.order.back());
      }
      ring.why += "; bottleneck " + ring.bottleneckLink;
      if (shared.bw < ring.bottleneck - kEpsilon) {
        ring.why += strprintf(", shared by %zu channels", rings.size());
      }
      plan->rings.push_back(ring);
    }
    noteRepeatedPaths(&plan->rings, ranks_.cpu ? "CPU thread" : "GPU block");
    plan->summary = strprintf(
        "%zu channel(s) in NUMA order%s; ring bottleneck %s", rings.size(),
        hosts_ == 1 && rings.size() > 1 ? " (one host has one such order: every channel takes it)"
                                        : "",
        plan->best >= kLocalBw ? "none (shared memory)" : formatBandwidth(plan->best).c_str());
    return okStatus();
  }

  // `order` with each run of ranks on one NUMA node rotated by k.
  std::vector<int> rotateNumaBlocks(const std::vector<int>& order, int k) const {
    std::vector<int> out;
    size_t i = 0;
    while (i < order.size()) {
      size_t j = i;
      int numa = ranks_.numaOfRank[static_cast<size_t>(order[i])];
      while (j < order.size() && ranks_.numaOfRank[static_cast<size_t>(order[j])] == numa)
        ++j;
      size_t len = j - i, shift = static_cast<size_t>(k) % len;
      for (size_t x = 0; x < len; ++x)
        out.push_back(order[i + (x + shift) % len]);
      i = j;
    }
    return out;
  }

  const System& s_;
  HopTable hops_;
  const RankSet& ranks_;
  int hosts_;
  ChannelOptions opt_;
  int n_;
  std::vector<int> nicOf_;  // per rank (hosts > 1)
  std::vector<int> nics_;
  NicUses nicUses_;
  long budget_ = 0;
  PathClass maxClass_ = PathClass::kNet;
  double speed_ = 0;
  Capacity* cap_ = nullptr;
  Capacity idle_;  // the machine with nothing running
  Strategy strategy_ = Strategy::kMostRemaining;
};

}  // namespace

std::string describeHops(const std::vector<PathClass>& hops) {
  std::map<PathClass, int> counts;
  for (PathClass p : hops)
    ++counts[p];
  std::string out;
  for (auto [cls, n] : counts) {
    if (!out.empty()) out += ", ";
    out += std::to_string(n) + " " + toString(cls);
  }
  return out.empty() ? "no hop" : out;
}

Status searchRings(const System& system, const Paths& paths, const RankSet& ranks, int hosts,
                   const ChannelOptions& options, RingPlan* out) {
  *out = RingPlan();
  if (ranks.nodes.empty()) return errorf(weftInvalidArgument, "no ranks");
  if (hosts < 1 || hosts > 65536) return errorf(weftInvalidArgument, "hosts must be 1 to 65536");
  Search search(system, paths, ranks, hosts, options);
  return search.run(out);
}

}  // namespace weft::topo
