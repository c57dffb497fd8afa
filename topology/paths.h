// Paths between devices: for every pair, the route NCCL's model would use (fewest hops, then the
// widest bottleneck), its class (NVL ... SYS) and its bottleneck bandwidth. Also the nvidia-smi
// view of a pair (the PCIe class and the NVLinks joining them), which ignores NVLink routing.
#pragma once

#include <vector>

#include "topology/system.h"

namespace weft::topo {

struct Path {
  PathClass cls = PathClass::kNone;
  double bw = 0;           // GB/s: the narrowest link on the way
  std::vector<int> nodes;  // source first, destination last
  std::vector<int> links;  // in order

  bool exists() const { return cls != PathClass::kNone; }
  int hops() const { return static_cast<int>(links.size()); }
};

// Paths from every CPU, GPU, NIC, NET and unknown PCI endpoint to every node.
//
// Rules (as NCCL's): a path never passes through a NIC or NET (except into its own ports), nor
// an unknown endpoint; it passes through a GPU only from NVLink to NVLink, with one GPU in the
// middle at most (class NVB). Among routes with the fewest hops the widest wins, then the best
// class. A route's class is the worst of its steps: NVLink NVL; a PCIe switch PIX; from switch to
// switch PXB; into or out of a CPU or host bridge PHB; from one host bridge through the CPU to
// another NODE; between NUMA nodes SYS.
class Paths {
 public:
  explicit Paths(const System& system);

  // The path from `from` to `to`; one that does not exist when `from` is not a source or no
  // route joins them.
  const Path& get(int from, int to) const;

 private:
  void computeFrom(int source, std::vector<Path>* out) const;

  const System* system_;
  std::vector<int> row_;  // node -> index into rows_, or -1
  std::vector<std::vector<Path>> rows_;
};

// nvidia-smi's class of a pair (PIX, PXB, PHB, NODE, SYS; LOC for a device and itself), from the
// PCIe tree only.
PathClass pcieClass(const System& system, int a, int b);

// The NVLinks joining two GPUs as nvidia-smi counts them: a direct bond, or through the NVSwitch
// fabric the fewer of the two GPUs' links to it. 0 when none.
int nvlinkCount(const System& system, int gpuA, int gpuB);

}  // namespace weft::topo
