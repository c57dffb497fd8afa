// The NIC choices of topology/topo.h.
#include "topology/topo.h"

#include "topology/locality.h"
#include "topology/paths.h"

namespace weft::topo {
namespace {

std::string pick(const System& s, int from, int localIndex) {
  if (from < 0) return "";
  Paths paths(s);
  std::vector<int> ties = closestNics(s, paths, from);
  if (ties.empty()) return "";
  if (localIndex < 0) localIndex = 0;
  return nicInterface(s, ties[static_cast<size_t>(localIndex) % ties.size()]);
}

}  // namespace

std::string nicForNuma(const System& s, int numa, int localIndex) {
  int cpu = s.findCpu(numa);
  if (cpu < 0) {
    std::vector<int> cpus = s.nodesOf(NodeKind::kCpu);
    if (cpus.empty()) return "";
    cpu = cpus.front();
  }
  return pick(s, cpu, localIndex);
}

std::string nicForGpu(const System& s, int gpu, int localIndex) {
  std::vector<int> gpus = s.gpus();
  if (gpu < 0 || gpu >= static_cast<int>(gpus.size())) return "";
  return pick(s, gpus[static_cast<size_t>(gpu)], localIndex);
}

}  // namespace weft::topo
