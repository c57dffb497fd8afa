// The system model: a graph of CPUs (NUMA nodes), host bridges, PCIe switches, GPUs, NICs and
// their ports, and NVSwitches, joined by typed links with bandwidths. Readers (NCCL XML, hwloc,
// nvidia-smi matrices) and discovery build it; paths, search and the exporters read it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "topology/cpuset.h"
#include "topology/types.h"

namespace weft::topo {

// PCI attributes as the source spelled them ("" when absent), so exports can repeat them.
struct PciInfo {
  std::string busId;  // normalised "dddd:bb:dd.f"
  std::string classCode, vendor, device, subsystemVendor, subsystemDevice;  // "0x030200", "0x10de"
  std::string linkSpeed;                                                    // "16 GT/s"
  std::string linkWidth;                                                    // "16"
};

struct CpuInfo {
  int numaId = -1;
  int packageId = -1;  // socket; -1 when the source does not say
  CpuSet cpus;
  std::string arch;    // "x86_64", "ppc64", "arm64"
  std::string vendor;  // "GenuineIntel", "AuthenticAMD"
  int familyId = -1;
  int modelId = -1;
  std::string modelName;  // "AMD EPYC 7V12" (hwloc, /proc/cpuinfo)
  int cores = 0;          // physical cores in this NUMA node (hwloc, sysfs)
  uint64_t l3Bytes = 0;   // total L3 cache of this NUMA node
  uint64_t memoryBytes = 0;
};

struct GpuInfo {
  int dev = -1;   // NVML / CUDA index
  int sm = -1;    // compute capability * 10
  int rank = -1;  // NCCL's rank attribute in dumps
  int gdr = -1;
  std::string model;
  bool described = false;  // the source had a <gpu> element (not a bare PCI endpoint)
};

struct NetInfo {
  int dev = -1;
  int speedMbps = 0;  // 0: unknown
  int port = -1;
  int maxConn = -1;
  int gdr = -1;
  int coll = -1;
  std::string guid;
  std::string latency;
  std::string ifname;      // the IP interface (eth0, ib0) when known
  std::string rdmaDevice;  // the verbs device (mlx5_0) when known
  std::string linkLayer;   // "InfiniBand", "Ethernet"
};

struct Node {
  NodeKind kind = NodeKind::kPciDevice;
  std::string name;  // GPU3, mlx5_0, CPU1, the bus id of a switch, ...
  int parent = -1;   // the node above in the PCI / containment tree; -1 for CPUs and NVSwitches
  std::vector<int> links;
  PciInfo pci;
  CpuInfo cpu;
  GpuInfo gpu;
  NetInfo net;
  std::vector<std::string> members;  // NVSwitch: bus ids of its chips, as the source listed them
  bool isVirtual = false;            // a NIC with no PCI device (container interface, ...)
  int ordinal = -1;                  // GPUs and NICs: their number (GPU<ordinal>), from finalize
};

struct Link {
  int a = -1;
  int b = -1;
  LinkKind kind = LinkKind::kLocal;
  double bw = 0;        // GB/s in each direction
  int nvlinks = 0;      // NVLink: bonded links
  int nvlinkGen = 0;    // NVLink: generation, 0 when unknown
  double pcieRate = 0;  // PCIe: GT/s per lane, 0 when unknown
  int pcieWidth = 0;    // PCIe: lanes, 0 when unknown

  int other(int node) const { return node == a ? b : a; }
};

class System {
 public:
  std::string source;       // the file, or "this machine"
  std::string format;       // "NCCL topology XML", "hwloc XML", "nvidia-smi topo -m", "discovery"
  bool discovered = false;  // this machine, as discovery found it (false: read from a file)
  std::vector<std::string> notes;  // what the reader noticed (partial file, guesses made)
  std::vector<Node> nodes;
  std::vector<Link> links;

  int addNode(Node node);
  // Adds a link; NVLinks between the same pair are bonded into one (counts and bandwidth add).
  int connect(int a, int b, LinkKind kind, double bw);
  // Places `child` under `parent` in the tree and links them.
  int attach(int child, int parent, LinkKind kind, double bw);
  // Adds `count` NVLinks of a generation (0: unknown) of `bw` GB/s in all, bonding with any
  // NVLinks already between the two.
  int addNvlinks(int a, int b, int count, int generation, double bw);

  std::vector<int> nodesOf(NodeKind kind) const;
  // GPUs by number (GPU0, GPU1, ...) and NICs by number, once finalize has run.
  std::vector<int> gpus() const;
  std::vector<int> nics() const;
  int count(NodeKind kind) const;
  int findBusId(std::string_view busId) const;  // -1 when absent
  int findCpu(int numaId) const;
  int findNet(std::string_view name) const;
  int linkBetween(int a, int b, LinkKind kind) const;  // -1 when absent
  // The CPU (NUMA node) a device hangs from; -1 for NVSwitches and detached nodes.
  int cpuOf(int node) const;
  // The ports of a NIC.
  std::vector<int> netsOf(int nic) const;
  // A name for messages: "GPU3", "mlx5_0", "CPU1", "PCIe switch 0000:18:00.0".
  std::string label(int node) const;
  // One line describing a link: "GPU0-GPU1 NVLink2 x2 (40.0 GB/s)".
  std::string describeLink(int link) const;

  // Numbers GPUs (by their dev index when every GPU has a distinct one, else by bus id) and NICs
  // (in the order of the source), names them (GPU<i>; a NIC by its first port, else NIC<i>), and
  // joins the CPUs pairwise with interconnect links, as NCCL does. Readers call it last.
  void finalize();
};

// A text form of the graph that two systems share exactly when they are the same graph (the
// attributes NCCL XML carries, the tree and every link); used to check round trips.
std::string canonicalForm(const System& system);

}  // namespace weft::topo
