// What the rest of Weft uses from topology/: the system of this host and where ranks are in it.
// The communicator calls these at init; weft-topo shows the same answers.
#pragma once

#include <string>
#include <vector>

#include "src/base/status.h"
#include "topology/cpu_ranks.h"
#include "topology/load.h"
#include "topology/system.h"

namespace weft::topo {

// loadLocalSystem(System*)            this machine, or the file WEFT_TOPO_FILE names (load.h)
// currentNumaNode(const System&)      NUMA node of this process, or -1 (cpu_ranks.h)
// orderByLocality(localities)         ring order of a host's ranks (cpu_ranks.h)
// packLocality / unpackLocality       four bytes per rank for the all-gather (cpu_ranks.h)

// The NIC closest to NUMA node `numa` (for the tcp transport and the cost model): among equally
// close ones, the localIndex-th (mod their count) so a host's ranks spread over them. nic is -1
// when the system has no NIC.
struct NicChoice {
  int nic = -1;                // node index in the system
  std::string interface;       // the name a socket would bind (nicInterface)
  double bandwidthGBps = 0.0;  // nicBandwidth
};
NicChoice chooseNicForNuma(const System& system, int numa, int localIndex = 0);

// Its interface alone; empty when the system has no NIC.
std::string nicForNuma(const System& system, int numa, int localIndex = 0);

// The same for a GPU (GPU<gpu>, by number).
std::string nicForGpu(const System& system, int gpu, int localIndex = 0);

}  // namespace weft::topo
