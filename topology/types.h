// The vocabulary of the system model: kinds of nodes and links, and NCCL's path classes.
#pragma once

#include <cstdint>
#include <string_view>

namespace weft::topo {

// What a node of the system graph is.
enum class NodeKind : uint8_t {
  kCpu,         // a NUMA node and its cores (NCCL's CPU node)
  kHostBridge,  // a PCI root complex; known from hwloc and sysfs, absent from NCCL files
  kPciSwitch,   // a PCIe switch (or a bridge standing for one)
  kGpu,
  kNic,        // a network adapter (a PCI function, or a virtual interface)
  kNet,        // one port / network device of a NIC (NCCL's NET node)
  kNvSwitch,   // the NVLink switch fabric of a box (all NVSwitch chips as one node, like NCCL)
  kPciDevice,  // a PCI endpoint of unknown or other class (kept so files round-trip)
};

// What a link is made of.
enum class LinkKind : uint8_t {
  kLocal,            // inside one device (NIC to its port), or a link with no real limit
  kNvlink,           // NVLink: a count of bonded links of one generation
  kPcie,             // PCIe: a generation and a lane width
  kCpuInterconnect,  // between NUMA nodes / sockets (QPI, UPI, Infinity Fabric, X-Bus)
  kNetwork,          // a NIC port to the network
};

// How two devices reach each other, best first. NCCL's classes, with nvidia-smi's NODE (through
// the interconnect between host bridges of one NUMA node) between PHB and SYS.
enum class PathClass : uint8_t {
  kLoc,   // the same device
  kNvl,   // NVLink, directly or through NVSwitches
  kNvb,   // NVLink through one intermediate GPU
  kPix,   // at most one PCIe switch
  kPxb,   // several PCIe switches, not through a host bridge
  kPhb,   // through a PCIe host bridge (the CPU)
  kNode,  // through the interconnect between host bridges of one NUMA node
  kSys,   // through the interconnect between NUMA nodes (QPI/UPI/xGMI)
  kNet,   // through the network (another host)
  kNone,  // no path
};

const char* toString(NodeKind kind);
const char* toString(LinkKind kind);
const char* toString(PathClass cls);
// Accepts the names toString gives (and nvidia-smi's old name SOC for SYS); false otherwise.
bool parsePathClass(std::string_view text, PathClass* out);

inline PathClass worse(PathClass a, PathClass b) {
  return static_cast<uint8_t>(a) > static_cast<uint8_t>(b) ? a : b;
}

}  // namespace weft::topo
