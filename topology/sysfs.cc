#include "topology/sysfs.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>

#include "topology/bandwidth.h"
#include "topology/busid.h"

namespace weft::topo {
namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

int toInt(const std::optional<std::string>& s, int fallback) {
  if (!s || s->empty()) return fallback;
  char* end = nullptr;
  long v = strtol(s->c_str(), &end, 0);
  if (end == s->c_str()) return fallback;
  return static_cast<int>(v);
}

uint64_t sizeWithSuffix(const std::string& s) {
  char* end = nullptr;
  unsigned long long v = strtoull(s.c_str(), &end, 10);
  if (end && (*end == 'K' || *end == 'k')) v <<= 10;
  if (end && (*end == 'M' || *end == 'm')) v <<= 20;
  if (end && (*end == 'G' || *end == 'g')) v <<= 30;
  return v;
}

}  // namespace

std::optional<std::string> Sysfs::read(const std::string& path) const {
  std::ifstream in(root_ + path);
  if (!in) return std::nullopt;
  std::string line;
  std::getline(in, line);
  if (in.bad()) return std::nullopt;
  return trim(line);
}

std::vector<std::string> Sysfs::list(const std::string& dir) const {
  std::vector<std::string> out;
  DIR* d = opendir((root_ + dir).c_str());
  if (!d) return out;
  while (struct dirent* e = readdir(d)) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    out.push_back(e->d_name);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<SysfsNuma> Sysfs::numaNodes() const {
  std::vector<SysfsNuma> out;
  for (const std::string& e : list("/sys/devices/system/node")) {
    if (e.rfind("node", 0) != 0 || e.size() < 5 ||
        !std::all_of(e.begin() + 4, e.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      continue;
    }
    SysfsNuma n;
    n.id = toInt(e.substr(4), -1);
    auto list = read("/sys/devices/system/node/" + e + "/cpulist");
    if (list && !list->empty()) {
      if (auto set = CpuSet::parseList(*list)) n.cpus = *set;
    }
    std::ifstream mem(root_ + "/sys/devices/system/node/" + e + "/meminfo");
    std::string line;
    while (std::getline(mem, line)) {
      size_t pos = line.find("MemTotal:");
      if (pos != std::string::npos) {
        n.memoryBytes = strtoull(line.c_str() + pos + 9, nullptr, 10) * 1024;
        break;
      }
    }
    out.push_back(n);
  }
  std::sort(out.begin(), out.end(),
            [](const SysfsNuma& a, const SysfsNuma& b) { return a.id < b.id; });
  if (out.empty()) {
    // A kernel without NUMA: one node with every online CPU.
    SysfsNuma n;
    auto online = read("/sys/devices/system/cpu/online");
    if (online) {
      if (auto set = CpuSet::parseList(*online)) n.cpus = *set;
    }
    out.push_back(n);
  }
  return out;
}

int Sysfs::packageOf(int cpu) const {
  return toInt(
      read("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/physical_package_id"),
      -1);
}

int Sysfs::coresIn(const CpuSet& cpus) const {
  std::set<std::pair<int, int>> cores;
  for (int c : cpus.cpus()) {
    int core =
        toInt(read("/sys/devices/system/cpu/cpu" + std::to_string(c) + "/topology/core_id"), c);
    cores.insert({packageOf(c), core});
  }
  return static_cast<int>(cores.size());
}

uint64_t Sysfs::l3BytesIn(const CpuSet& cpus) const {
  std::set<std::string> seen;
  uint64_t total = 0;
  for (int c : cpus.cpus()) {
    std::string base = "/sys/devices/system/cpu/cpu" + std::to_string(c) + "/cache/";
    for (const std::string& idx : list(base)) {
      if (idx.rfind("index", 0) != 0) continue;
      if (read(base + idx + "/level").value_or("") != "3") continue;
      std::string shared = read(base + idx + "/shared_cpu_list").value_or(std::to_string(c));
      if (!seen.insert(shared).second) continue;
      total += sizeWithSuffix(read(base + idx + "/size").value_or("0"));
    }
  }
  return total;
}

SysfsCpuInfo Sysfs::cpuInfo() const {
  SysfsCpuInfo info;
  std::ifstream in(root_ + "/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) {
      if (!info.vendor.empty()) break;  // the first processor is enough
      continue;
    }
    std::string key = trim(line.substr(0, colon)), value = trim(line.substr(colon + 1));
    if (key == "vendor_id" && info.vendor.empty()) info.vendor = value;
    if (key == "cpu family" && info.family < 0) info.family = toInt(value, -1);
    if (key == "model" && info.model < 0) info.model = toInt(value, -1);
    if ((key == "model name" || key == "cpu") && info.modelName.empty()) info.modelName = value;
  }
  if (root_.empty()) {
    struct utsname u;
    if (uname(&u) == 0) info.arch = u.machine;
  } else {
    info.arch = read("/proc/arch").value_or("");
  }
  return info;
}

std::vector<std::string> Sysfs::pciDevices() const {
  std::vector<std::string> out;
  for (const std::string& e : list("/sys/bus/pci/devices")) {
    if (auto id = normalizeBusId(e)) out.push_back(*id);
  }
  return out;
}

std::optional<SysfsPci> Sysfs::pci(const std::string& busId) const {
  std::string link = root_ + "/sys/bus/pci/devices/" + busId;
  char resolved[PATH_MAX];
  if (!realpath(link.c_str(), resolved)) return std::nullopt;
  SysfsPci p;
  p.busId = busId;
  std::string path = resolved;
  size_t pos = 0;
  while (pos < path.size()) {
    size_t next = path.find('/', pos + 1);
    std::string part = path.substr(pos + 1, next == std::string::npos ? next : next - pos - 1);
    if (part.rfind("pci", 0) == 0 && part.size() > 3) {
      p.rootComplex = part.substr(3);
      p.chain.clear();
    } else if (part.size() == 12) {
      if (auto id = normalizeBusId(part)) p.chain.push_back(*id);
    }
    if (next == std::string::npos) break;
    pos = next;
  }
  std::string base = "/sys/bus/pci/devices/" + busId;
  p.classCode = static_cast<unsigned>(toInt(read(base + "/class"), 0));
  p.vendor = read(base + "/vendor").value_or("");
  p.device = read(base + "/device").value_or("");
  p.subsystemVendor = read(base + "/subsystem_vendor").value_or("");
  p.subsystemDevice = read(base + "/subsystem_device").value_or("");
  p.numaNode = toInt(read(base + "/numa_node"), -1);
  // As NCCL: the slower of the device's and its upstream port's maximum.
  std::string speed = read(base + "/max_link_speed").value_or("");
  std::string portSpeed = read(base + "/../max_link_speed").value_or("");
  double a = pcieRateGts(speed), b = pcieRateGts(portSpeed);
  p.linkSpeed = (b > 0 && (a <= 0 || b < a)) ? portSpeed : speed;
  int w = toInt(read(base + "/max_link_width"), 0);
  int pw = toInt(read(base + "/../max_link_width"), 0);
  p.linkWidth = (pw > 0 && (w <= 0 || pw < w)) ? pw : w;
  return p;
}

std::vector<SysfsNet> Sysfs::netInterfaces() const {
  std::vector<SysfsNet> out;
  for (const std::string& name : list("/sys/class/net")) {
    SysfsNet n;
    n.name = name;
    std::string base = "/sys/class/net/" + name;
    n.type = toInt(read(base + "/type"), 0);
    int speed = toInt(read(base + "/speed"), -1);
    n.speedMbps = speed > 0 ? speed : 0;
    n.operstate = read(base + "/operstate").value_or("");
    char resolved[PATH_MAX];
    if (realpath((root_ + base + "/device").c_str(), resolved)) {
      // The last bus id on the way (virtio puts a virtioN directory below the PCI device).
      std::string path = resolved;
      size_t pos = 0;
      while ((pos = path.find('/', pos)) != std::string::npos) {
        ++pos;
        std::string part = path.substr(pos, path.find('/', pos) - pos);
        if (part.size() == 12) {
          if (auto id = normalizeBusId(part)) n.busId = *id;
        }
      }
    }
    out.push_back(n);
  }
  return out;
}

std::vector<SysfsIbPort> Sysfs::ibPorts(const std::string& device) const {
  std::vector<SysfsIbPort> out;
  std::string base = "/sys/class/infiniband/" + device;
  std::string busId;
  char resolved[PATH_MAX];
  if (realpath((root_ + base + "/device").c_str(), resolved)) {
    const char* slash = strrchr(resolved, '/');
    if (auto id = normalizeBusId(slash ? slash + 1 : resolved)) busId = *id;
  }
  std::vector<std::string> netdevs = list(base + "/device/net");
  for (const std::string& port : list(base + "/ports")) {
    SysfsIbPort p;
    p.device = device;
    p.port = toInt(port, 1);
    std::string pb = base + "/ports/" + port;
    p.rateGbps = strtod(read(pb + "/rate").value_or("0").c_str(), nullptr);
    p.linkLayer = read(pb + "/link_layer").value_or("");
    p.state = read(pb + "/state").value_or("");
    p.busId = busId;
    p.netdevs = netdevs;
    out.push_back(p);
  }
  return out;
}

}  // namespace weft::topo
