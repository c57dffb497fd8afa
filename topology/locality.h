// Which NIC a device should use: the closest one (a NIC with a PCI device before a virtual
// interface; one on the device's NUMA node before one across sockets, and there an RDMA-capable
// NIC before a plain one; then the best path class, the widest path, the fewest hops), with
// devices that tie spread over the tied NICs.
#pragma once

#include <string>
#include <vector>

#include "topology/paths.h"
#include "topology/system.h"

namespace weft::topo {

// The NICs from closest to farthest for a node (GPU, CPU, ...); NICs it cannot reach are left out.
std::vector<int> nicsByCloseness(const System& system, const Paths& paths, int from);

// The NICs as close to `from` as the closest one (the tie set), in NIC order.
std::vector<int> closestNics(const System& system, const Paths& paths, int from);

// A NIC for each of `devices`: among the closest NICs, the one fewest earlier devices got.
// -1 entries when the system has no NIC.
std::vector<int> assignNics(const System& system, const Paths& paths,
                            const std::vector<int>& devices);

// Whether a NIC can do RDMA: a verbs device (InfiniBand, RoCE, usNIC) or link layer is known for
// a port, its PCI class is InfiniBand, it is an AWS EFA, or an NCCL dump gives a port GPUDirect
// RDMA (gdr="1", which only the IB/verbs transports report).
bool isRdmaNic(const System& system, int nic);

// The name a socket transport would bind: the port's interface (eth0, ib0) when known, else the
// port's name, else the NIC's.
std::string nicInterface(const System& system, int nic);

// A NIC's network bandwidth in GB/s: its ports' speeds added up; a NIC with no port known (a
// bare entry of a partial file) is taken to run at its PCIe link's speed.
double nicBandwidth(const System& system, int nic);

// A note for System::notes when some NIC port has no known speed ("" when all have one): they
// are taken to run at NCCL's default (kDefaultNetMbps); `source` says who did not give it.
std::string assumedNetSpeedNote(const System& system, const std::string& source);

}  // namespace weft::topo
