#include "topology/nvsmi_reader.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>
#include <set>

#include "topology/bandwidth.h"
#include "topology/paths.h"

namespace weft::topo {
namespace {

bool isGpuLabel(const std::string& s) {
  if (s.size() < 4 || s.size() > 9 || s.compare(0, 3, "GPU") != 0) return false;
  return std::all_of(s.begin() + 3, s.end(), [](char c) { return std::isdigit(c); });
}

struct UnionFind {
  std::vector<int> parent;
  explicit UnionFind(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int find(int x) {
    while (parent[x] != x)
      x = parent[x] = parent[parent[x]];
    return x;
  }
  void join(int a, int b) { parent[find(a)] = find(b); }
};

class Builder {
 public:
  Builder(const MatrixTable& t, const std::string& name, System* out)
      : t_(t), name_(name), sys_(out) {}

  Status run() {
    WEFT_RETURN_IF_ERROR(validate());
    size_t n = t_.columns.size();
    // Row index of every column.
    rowOf_.assign(n, 0);
    for (size_t c = 0; c < n; ++c) {
      auto it = std::find(t_.rows.begin(), t_.rows.end(), t_.columns[c]);
      rowOf_[c] = static_cast<size_t>(it - t_.rows.begin());
    }
    WEFT_RETURN_IF_ERROR(groupCpus());
    buildTrees();
    addNvlinks();
    sys_->format = "nvidia-smi topo -m";
    sys_->source = name_;
    sys_->notes.push_back(
        "nvidia-smi matrix: the PCIe tree is inferred from the path classes (bus ids fffe:* are "
        "made up); link speeds are not in the file (PCIe Gen3 x16, NVLink 20 GB/s per link and "
        "10 Gb/s NICs assumed)");
    sys_->finalize();
    checkModel();
    return okStatus();
  }

 private:
  const std::string& cell(size_t a, size_t b) const { return t_.cells[rowOf_[a]][b]; }

  // PCIe class of a pair; false for NV# cells (the PCIe relation is not shown).
  bool pcie(size_t a, size_t b, PathClass* cls) const {
    const std::string& c = cell(a, b);
    if (c.rfind("NV", 0) == 0) return false;
    return parsePathClass(c, cls);
  }

  Status validate() {
    size_t n = t_.columns.size();
    std::set<std::string> seen;
    for (const std::string& c : t_.columns) {
      // nvidia-smi names devices GPU<n>, NIC<n> or by their verbs name: printable, no blanks.
      bool printable = !c.empty() && std::all_of(c.begin(), c.end(), [](char ch) {
        return static_cast<unsigned char>(ch) > 0x20 && static_cast<unsigned char>(ch) < 0x7f;
      });
      if (!printable || c.size() > 64) {
        return errorf(weftInvalidArgument, "%s: device name \"%s\" is not a plain name",
                      name_.c_str(), c.c_str());
      }
      if (!seen.insert(c).second) {
        return errorf(weftInvalidArgument, "%s: device %s appears twice in the header",
                      name_.c_str(), c.c_str());
      }
    }
    std::set<std::string> rows;
    for (const std::string& r : t_.rows) {
      if (!seen.count(r)) {
        return errorf(weftInvalidArgument,
                      "%s: dangling reference: row %s is not a device of the header", name_.c_str(),
                      r.c_str());
      }
      if (!rows.insert(r).second) {
        return errorf(weftInvalidArgument, "%s: row %s appears twice", name_.c_str(), r.c_str());
      }
    }
    for (const std::string& c : t_.columns) {
      if (!rows.count(c)) {
        return errorf(weftInvalidArgument, "%s: device %s of the header has no row", name_.c_str(),
                      c.c_str());
      }
    }
    for (size_t r = 0; r < t_.rows.size(); ++r) {
      for (size_t c = 0; c < n; ++c) {
        const std::string& v = t_.cells[r][c];
        bool diagonal = t_.rows[r] == t_.columns[c];
        PathClass cls;
        bool ok = diagonal ? v == "X" : (parsePathClass(v, &cls) || nvCount(v) > 0);
        if (!ok) {
          return errorf(weftInvalidArgument, "%s: row %s, column %s: \"%s\" is not %s",
                        name_.c_str(), t_.rows[r].c_str(), t_.columns[c].c_str(), v.c_str(),
                        diagonal ? "X" : "a path class (NV#, PIX, PXB, PHB, NODE, SYS)");
        }
      }
    }
    WEFT_RETURN_IF_ERROR(checkSymmetric());
    if (std::none_of(t_.columns.begin(), t_.columns.end(), isGpuLabel)) {
      return errorf(weftInvalidArgument, "%s: the matrix has no GPU", name_.c_str());
    }
    return okStatus();
  }

  // A path joins two devices both ways, so a cell differing from its mirror is a broken file;
  // taking either value would describe a machine the file does not.
  Status checkSymmetric() const {
    std::map<std::string, size_t> rowOf, columnOf;
    for (size_t i = 0; i < t_.rows.size(); ++i)
      rowOf[t_.rows[i]] = i;
    for (size_t i = 0; i < t_.columns.size(); ++i)
      columnOf[t_.columns[i]] = i;
    for (size_t r = 0; r < t_.rows.size(); ++r) {
      for (size_t c = 0; c < t_.columns.size(); ++c) {
        const std::string& a = t_.rows[r];
        const std::string& b = t_.columns[c];
        const std::string& mirror = t_.cells[rowOf.at(b)][columnOf.at(a)];
        if (t_.cells[r][c] != mirror) {
          return errorf(weftInvalidArgument,
                        "%s: the matrix is not symmetric: row %s, column %s is %s, but row %s, "
                        "column %s is %s",
                        name_.c_str(), a.c_str(), b.c_str(), t_.cells[r][c].c_str(), b.c_str(),
                        a.c_str(), mirror.c_str());
        }
      }
    }
    return okStatus();
  }

  static int nvCount(const std::string& v) {
    if (v.size() < 3 || v.compare(0, 2, "NV") != 0 || v.size() > 5) return 0;
    int n = 0;
    for (size_t i = 2; i < v.size(); ++i) {
      if (!std::isdigit(static_cast<unsigned char>(v[i]))) return 0;
      n = n * 10 + (v[i] - '0');
    }
    return n <= 64 ? n : 0;  // no GPU has more
  }

  // CPU of every device: by the GPUs' affinity when printed, else by the non-SYS classes.
  Status groupCpus() {
    size_t n = t_.columns.size();
    UnionFind uf(n);
    for (size_t a = 0; a < n; ++a) {
      for (size_t b = a + 1; b < n; ++b) {
        PathClass c;
        if (pcie(a, b, &c) && c != PathClass::kSys)
          uf.join(static_cast<int>(a), static_cast<int>(b));
      }
    }
    // Join the classes whose GPUs print the same affinity.
    std::vector<std::string> affinity(n);
    for (size_t c = 0; c < n; ++c) {
      const std::string& cpu = t_.cpuAffinity[rowOf_[c]];
      const std::string& numa = t_.numaAffinity[rowOf_[c]];
      if (isGpuLabel(t_.columns[c]) && cpu != "N/A" && !cpu.empty()) affinity[c] = cpu + "|" + numa;
    }
    for (size_t a = 0; a < n; ++a) {
      for (size_t b = a + 1; b < n; ++b) {
        if (!affinity[a].empty() && affinity[a] == affinity[b]) {
          uf.join(static_cast<int>(a), static_cast<int>(b));
        }
      }
    }
    std::vector<int> groupOf(n, -1);
    std::vector<int> roots;
    for (size_t c = 0; c < n; ++c) {
      int r = uf.find(static_cast<int>(c));
      auto it = std::find(roots.begin(), roots.end(), r);
      if (it == roots.end()) {
        roots.push_back(r);
        it = roots.end() - 1;
      }
      groupOf[c] = static_cast<int>(it - roots.begin());
    }
    cpuOfDevice_.assign(n, -1);
    for (size_t g = 0; g < roots.size(); ++g) {
      Node cpu;
      cpu.kind = NodeKind::kCpu;
      cpu.cpu.numaId = static_cast<int>(g);
      for (size_t c = 0; c < n; ++c) {
        if (groupOf[c] != static_cast<int>(g) || !isGpuLabel(t_.columns[c])) continue;
        const std::string& list = t_.cpuAffinity[rowOf_[c]];
        if (!list.empty() && list != "N/A" && cpu.cpu.cpus.empty()) {
          auto set = CpuSet::parseList(list);
          if (!set) {
            return errorf(weftInvalidArgument, "%s: row %s: CPU affinity \"%s\" is not a CPU list",
                          name_.c_str(), t_.columns[c].c_str(), list.c_str());
          }
          cpu.cpu.cpus = *set;
        }
        const std::string& numa = t_.numaAffinity[rowOf_[c]];
        if (!numa.empty() && numa != "N/A" &&
            std::all_of(numa.begin(), numa.end(), [](char ch) { return std::isdigit(ch); }) &&
            numa.size() < 6) {
          cpu.cpu.numaId = std::stoi(numa);
        }
      }
      while (sys_->findCpu(cpu.cpu.numaId) >= 0)
        cpu.cpu.numaId += 1000;
      cpu.name = "CPU" + std::to_string(cpu.cpu.numaId);
      int id = sys_->addNode(std::move(cpu));
      for (size_t c = 0; c < n; ++c) {
        if (groupOf[c] == static_cast<int>(g)) cpuOfDevice_[c] = id;
      }
    }
    return okStatus();
  }

  // Inside a CPU: PIX groups share a switch, PXB groups an upper switch, PHB groups a host
  // bridge (only when some pair is NODE, i.e. host bridges differ).
  void buildTrees() {
    size_t n = t_.columns.size();
    deviceNode_.assign(n, -1);
    // Devices in column order: GPUs first (sorted by number), then NICs, as nvidia-smi orders.
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      bool ga = isGpuLabel(t_.columns[a]), gb = isGpuLabel(t_.columns[b]);
      if (ga != gb) return ga;
      if (ga) return std::stoi(t_.columns[a].substr(3)) < std::stoi(t_.columns[b].substr(3));
      return false;
    });
    int nics = 0;
    for (size_t c : order) {
      Node dev;
      bool gpu = isGpuLabel(t_.columns[c]);
      dev.kind = gpu ? NodeKind::kGpu : NodeKind::kNic;
      dev.name = t_.columns[c];
      dev.pci.busId = syntheticBusId();
      dev.pci.classCode = gpu ? "0x030200" : "0x020000";
      if (gpu) {
        dev.gpu.described = true;
        dev.gpu.dev = dev.gpu.rank = std::stoi(t_.columns[c].substr(3));
        dev.gpu.sm = 0;
        dev.gpu.gdr = 0;
      }
      deviceNode_[c] = sys_->addNode(std::move(dev));
      if (!gpu) {
        Node net;
        net.kind = NodeKind::kNet;
        net.name = t_.columns[c];
        net.net.dev = nics++;
        int id = sys_->addNode(std::move(net));
        sys_->attach(id, deviceNode_[c], LinkKind::kNetwork, netBw(0));
      }
    }
    for (int cpu : sys_->nodesOf(NodeKind::kCpu)) {
      std::vector<size_t> members;
      for (size_t c : order) {
        if (cpuOfDevice_[c] == cpu) members.push_back(c);
      }
      buildCpuTree(cpu, members);
    }
  }

  void buildCpuTree(int cpu, const std::vector<size_t>& members) {
    size_t m = members.size();
    auto groups = [&](std::initializer_list<PathClass> joinOn) {
      UnionFind uf(m);
      for (size_t i = 0; i < m; ++i) {
        for (size_t j = i + 1; j < m; ++j) {
          PathClass c;
          if (!pcie(members[i], members[j], &c)) continue;
          for (PathClass k : joinOn) {
            if (c == k) uf.join(static_cast<int>(i), static_cast<int>(j));
          }
        }
      }
      std::vector<int> root(m);
      for (size_t i = 0; i < m; ++i)
        root[i] = uf.find(static_cast<int>(i));
      return root;
    };
    std::vector<int> pix = groups({PathClass::kPix});
    std::vector<int> pxb = groups({PathClass::kPix, PathClass::kPxb});
    std::vector<int> phb = groups({PathClass::kPix, PathClass::kPxb, PathClass::kPhb});
    bool anyNode = false;
    for (size_t i = 0; i < m; ++i) {
      for (size_t j = i + 1; j < m; ++j) {
        PathClass c;
        anyNode |= pcie(members[i], members[j], &c) && c == PathClass::kNode;
      }
    }
    std::map<int, int> bridgeOf, upperOf, leafOf;
    for (size_t i = 0; i < m; ++i) {
      int parent = cpu;
      if (anyNode) {
        auto it = bridgeOf.find(phb[i]);
        if (it == bridgeOf.end()) {
          Node hb;
          hb.kind = NodeKind::kHostBridge;
          hb.name = "hb" + std::to_string(sys_->count(NodeKind::kHostBridge));
          int id = sys_->addNode(std::move(hb));
          sys_->attach(id, cpu, LinkKind::kPcie, kLocalBw);
          it = bridgeOf.emplace(phb[i], id).first;
        }
        parent = it->second;
      }
      int pxbSize = static_cast<int>(std::count(pxb.begin(), pxb.end(), pxb[i]));
      int pixSize = static_cast<int>(std::count(pix.begin(), pix.end(), pix[i]));
      bool severalLeaves = false;
      for (size_t j = 0; j < m; ++j)
        severalLeaves |= pxb[j] == pxb[i] && pix[j] != pix[i];
      if (severalLeaves) {
        auto it = upperOf.find(pxb[i]);
        if (it == upperOf.end()) it = upperOf.emplace(pxb[i], addSwitch(parent)).first;
        parent = it->second;
      }
      if (severalLeaves || pixSize > 1) {
        auto it = leafOf.find(pix[i]);
        if (it == leafOf.end()) it = leafOf.emplace(pix[i], addSwitch(parent)).first;
        parent = it->second;
      }
      (void)pxbSize;
      int dev = deviceNode_[members[i]];
      int link = sys_->attach(dev, parent, LinkKind::kPcie, kDefaultPcieBw);
      (void)link;
    }
  }

  // Devices in a matrix have no bus ids; give each a made-up one (domain fffe) so the system can
  // be exported as NCCL XML and read back.
  std::string syntheticBusId() {
    int k = nextBusId_++;
    return strprintf("fffe:%02x:%02x.0", (k / 32) & 0xff, k % 32);
  }

  int addSwitch(int parent) {
    Node sw;
    sw.kind = NodeKind::kPciSwitch;
    sw.pci.busId = syntheticBusId();
    sw.pci.classCode = "0x060400";
    sw.name = sw.pci.busId;
    int id = sys_->addNode(std::move(sw));
    sys_->attach(id, parent, LinkKind::kPcie, kDefaultPcieBw);
    return id;
  }

  void addNvlinks() {
    size_t n = t_.columns.size();
    std::vector<size_t> gpus;
    for (size_t c = 0; c < n; ++c) {
      if (isGpuLabel(t_.columns[c])) gpus.push_back(c);
    }
    // Every pair NV<k> with one k, and three GPUs or more: an NVSwitch box.
    int common = -1;
    bool allSame = gpus.size() >= 3;
    for (size_t i = 0; i < gpus.size() && allSame; ++i) {
      for (size_t j = 0; j < gpus.size(); ++j) {
        if (i == j) continue;
        int k = nvCount(cell(gpus[i], gpus[j]));
        if (k == 0 || (common >= 0 && k != common)) allSame = false;
        common = k;
      }
    }
    if (allSame) {
      Node sw;
      sw.kind = NodeKind::kNvSwitch;
      sw.name = "NVSwitch";
      int id = sys_->addNode(std::move(sw));
      for (size_t g : gpus)
        sys_->addNvlinks(deviceNode_[g], id, common, 0, common * kDefaultNvlinkBw);
      sys_->notes.push_back("every GPU pair shows NV" + std::to_string(common) +
                            ": modelled as GPUs joined by an NVSwitch fabric");
      return;
    }
    for (size_t i = 0; i < gpus.size(); ++i) {
      for (size_t j = i + 1; j < gpus.size(); ++j) {
        int a = nvCount(cell(gpus[i], gpus[j])), b = nvCount(cell(gpus[j], gpus[i]));
        int k = std::max(a, b);
        if (k > 0) {
          sys_->addNvlinks(deviceNode_[gpus[i]], deviceNode_[gpus[j]], k, 0, k * kDefaultNvlinkBw);
        }
      }
    }
  }

  // Reports pairs whose class the inferred tree does not reproduce (a matrix no PCIe tree fits).
  void checkModel() {
    size_t n = t_.columns.size();
    int mismatches = 0;
    std::string first;
    for (size_t a = 0; a < n; ++a) {
      for (size_t b = 0; b < n; ++b) {
        PathClass c;
        if (a == b || !pcie(a, b, &c)) continue;
        PathClass got = pcieClass(*sys_, deviceNode_[a], deviceNode_[b]);
        if (got != c) {
          if (mismatches++ == 0) {
            first = t_.columns[a] + "/" + t_.columns[b] + " is " + toString(c) + " in the file, " +
                    toString(got) + " in the model";
          }
        }
      }
    }
    if (mismatches > 0) {
      sys_->notes.push_back(strprintf("no PCIe tree matches every cell: %d cell(s) differ, e.g. %s",
                                      mismatches, first.c_str()));
    }
  }

  const MatrixTable& t_;
  const std::string& name_;
  System* sys_;
  std::vector<size_t> rowOf_;
  std::vector<int> cpuOfDevice_;
  std::vector<int> deviceNode_;
  int nextBusId_ = 0;
};

}  // namespace

Status parseNvsmiMatrix(std::string_view text, const std::string& name, System* out) {
  *out = System();
  MatrixTable table;
  WEFT_RETURN_IF_ERROR(parseMatrixTable(text, name, &table));
  Builder builder(table, name, out);
  Status s = builder.run();
  if (!s.ok()) *out = System();
  return s;
}

}  // namespace weft::topo