#include "topology/ranks.h"

#include <algorithm>

namespace weft::topo {

std::string RankSet::label(const System& s, int rank) const {
  if (rank < 0 || rank >= static_cast<int>(nodes.size())) return "?";
  if (!cpu) return s.nodes[nodes[static_cast<size_t>(rank)]].name;
  return "rank" + std::to_string(rank) + "@NUMA" +
         std::to_string(numaOfRank[static_cast<size_t>(rank)]);
}

int defaultRanksPerHost(const System& s, RankDevice device) {
  int gpus = s.count(NodeKind::kGpu);
  if (device != RankDevice::kCpu && gpus > 0) return gpus;
  return std::max(1, s.count(NodeKind::kCpu));
}

Status chooseRanks(const System& s, int n, RankDevice device, RankSet* out) {
  *out = RankSet();
  out->asked = n;
  if (n < 1 || n > 4096) {
    return errorf(weftInvalidArgument, "ranks per host must be 1 to 4096, not %d", n);
  }
  std::vector<int> gpus = s.gpus();
  int haveGpus = static_cast<int>(gpus.size());
  if (device == RankDevice::kGpu && haveGpus < n) {
    return errorf(weftInvalidArgument, "%d GPU ranks asked for, but the system has %d GPU(s)", n,
                  haveGpus);
  }
  if (device != RankDevice::kCpu && haveGpus > 0) {
    // As NCCL runs: one rank per GPU. More ranks than GPUs would put two ranks on a GPU, which
    // NCCL refuses, so the host's ranks are its GPUs.
    int used = std::min(n, haveGpus);
    out->nodes.assign(gpus.begin(), gpus.begin() + used);
    out->note = used == 1 ? std::string("1 GPU rank: GPU0")
                          : strprintf("%d GPU rank(s): GPU0..GPU%d", used, used - 1);
    if (used < n) {
      out->note += strprintf(
          " (%d ranks per host asked for, but the system has %d GPU(s): one "
          "rank per GPU, as NCCL runs them)",
          n, haveGpus);
    }
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
                        gpus.empty() ? " (the system has no GPU)" : "");
  return okStatus();
}

}  // namespace weft::topo
