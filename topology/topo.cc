// The NIC choices of topology/topo.h.
#include "topology/topo.h"

#include "topology/locality.h"
#include "topology/paths.h"

namespace weft::topo {
namespace {

NicChoice pick(const System& s, int from, int localIndex) {
  NicChoice c;
  if (from < 0) return c;
  Paths paths(s);
  std::vector<int> ties = closestNics(s, paths, from);
  if (ties.empty()) return c;
  if (localIndex < 0) localIndex = 0;
  c.nic = ties[static_cast<size_t>(localIndex) % ties.size()];
  c.interface = nicInterface(s, c.nic);
  c.bandwidthGBps = nicBandwidth(s, c.nic);
  return c;
}

}  // namespace

NicChoice chooseNicForNuma(const System& s, int numa, int localIndex) {
  int cpu = s.findCpu(numa);
  if (cpu < 0) {
    std::vector<int> cpus = s.nodesOf(NodeKind::kCpu);
    if (cpus.empty()) return NicChoice();
    cpu = cpus.front();
  }
  return pick(s, cpu, localIndex);
}

std::string nicForNuma(const System& s, int numa, int localIndex) {
  return chooseNicForNuma(s, numa, localIndex).interface;
}

std::string nicForGpu(const System& s, int gpu, int localIndex) {
  std::vector<int> gpus = s.gpus();
  if (gpu < 0 || gpu >= static_cast<int>(gpus.size())) return "";
  return pick(s, gpus[static_cast<size_t>(gpu)], localIndex).interface;
}

}  // namespace weft::topo
