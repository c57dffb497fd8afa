#include "topology/ranks.h"

namespace weft::topo {

std::string RankSet::label(const System& s, int rank) const {
  if (rank < 0 || rank >= static_cast<int>(nodes.size())) return "?";
  if (!cpu) return s.nodes[nodes[static_cast<size_t>(rank)]].name;
  return "rank" + std::to_string(rank) + "@NUMA" +
         std::to_string(numaOfRank[static_cast<size_t>(rank)]);
}

Status chooseRanks(const System& s, int n, RankDevice device, RankSet* out) {
  *out = RankSet();
  if (n < 1 || n > 4096) {
    return errorf(weftInvalidArgument, "ranks per host must be 1 to 4096, not %d", n);
  }
  std::vector<int> gpus = s.gpus();
  bool useGpus = device == RankDevice::kGpu ||
                 (device == RankDevice::kAuto && static_cast<int>(gpus.size()) >= n);
  if (useGpus) {
    if (static_cast<int>(gpus.size()) < n) {
      return errorf(weftInvalidArgument, "%d GPU ranks asked for, but the system has %zu GPU(s)", n,
                    gpus.size());
    }
    out->nodes.assign(gpus.begin(), gpus.begin() + n);
    out->note = strprintf("%d GPU rank(s): GPU0..GPU%d", n, n - 1);
    return okStatus();
  }
  std::vector<int> cpus = s.nodesOf(NodeKind::kCpu);
  if (cpus.empty()) return errorf(weftInvalidArgument, "the system has no CPU");
  out->cpu = true;
  for (int r = 0; r < n; ++r) {
    int cpu = cpus[static_cast<size_t>(static_cast<long>(r) * static_cast<long>(cpus.size()) / n)];
    out->nodes.push_back(cpu);
    out->numaOfRank.push_back(s.nodes[cpu].cpu.numaId);
  }
  out->note = strprintf("%d CPU rank(s), in blocks over %zu NUMA node(s)%s", n, cpus.size(),
                        gpus.empty() ? " (the system has no GPU)"
                        : device == RankDevice::kCpu
                            ? ""
                            : strprintf(" (more ranks than the %zu GPU(s))", gpus.size()).c_str());
  return okStatus();
}

}  // namespace weft::topo
