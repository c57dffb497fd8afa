// Reading Linux sysfs and procfs for discovery: NUMA nodes and CPUs, PCI devices with their link
// speed and width, network interfaces with their speed, InfiniBand ports. All paths are under a
// root ("" for the real system) so tests can build a fake tree.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "topology/cpuset.h"

namespace weft::topo {

struct SysfsPci {
  std::string busId;               // 0000:3b:00.0
  std::vector<std::string> chain;  // bus ids from the root port down to this device (inclusive)
  std::string rootComplex;         // "0000:00" (from "pci0000:00"), "" when unknown
  unsigned classCode = 0;          // 0x030200
  std::string vendor, device, subsystemVendor, subsystemDevice;  // "0x10de"
  std::string linkSpeed;  // the slower of this device's and its port's max_link_speed
  int linkWidth = 0;      // the narrower of the two max_link_width
  int numaNode = -1;
};

struct SysfsNet {
  std::string name;
  std::string busId;  // the PCI device behind it; "" for virtual interfaces
  int speedMbps = 0;  // 0 when unknown
  int type = 0;       // ARPHRD_*: 1 Ethernet, 32 InfiniBand, 772 loopback
  std::string operstate;
};

struct SysfsIbPort {
  std::string device;  // mlx5_0
  int port = 1;
  double rateGbps = 0;
  std::string linkLayer;  // "InfiniBand", "Ethernet"
  std::string state;      // "4: ACTIVE"
  std::string busId;
  std::vector<std::string> netdevs;  // interfaces on this port (from device/net)
};

struct SysfsNuma {
  int id = 0;
  CpuSet cpus;
  uint64_t memoryBytes = 0;
};

struct SysfsCpuInfo {
  std::string arch, vendor, modelName;
  int family = -1, model = -1;
};

class Sysfs {
 public:
  explicit Sysfs(std::string root = "") : root_(std::move(root)) {}

  // The first line of a file, trimmed; empty when unreadable.
  std::optional<std::string> read(const std::string& path) const;
  std::vector<std::string> list(const std::string& dir) const;

  std::vector<SysfsNuma> numaNodes() const;
  // Package (socket) of a CPU; -1 when unknown.
  int packageOf(int cpu) const;
  // Physical cores among `cpus` (distinct package/core pairs).
  int coresIn(const CpuSet& cpus) const;
  // L3 cache bytes serving `cpus` (each distinct cache once).
  uint64_t l3BytesIn(const CpuSet& cpus) const;
  SysfsCpuInfo cpuInfo() const;

  std::vector<std::string> pciDevices() const;  // bus ids
  std::optional<SysfsPci> pci(const std::string& busId) const;
  std::vector<SysfsNet> netInterfaces() const;
  std::vector<SysfsIbPort> ibPorts(const std::string& device) const;

 private:
  std::string root_;
};

}  // namespace weft::topo
