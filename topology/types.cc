#include "topology/types.h"

namespace weft::topo {

const char* toString(NodeKind kind) {
  switch (kind) {
    case NodeKind::kCpu:
      return "cpu";
    case NodeKind::kHostBridge:
      return "hostbridge";
    case NodeKind::kPciSwitch:
      return "pciswitch";
    case NodeKind::kGpu:
      return "gpu";
    case NodeKind::kNic:
      return "nic";
    case NodeKind::kNet:
      return "net";
    case NodeKind::kNvSwitch:
      return "nvswitch";
    case NodeKind::kPciDevice:
      return "pcidevice";
  }
  return "?";
}

const char* toString(LinkKind kind) {
  switch (kind) {
    case LinkKind::kLocal:
      return "local";
    case LinkKind::kNvlink:
      return "nvlink";
    case LinkKind::kPcie:
      return "pcie";
    case LinkKind::kCpuInterconnect:
      return "cpu";
    case LinkKind::kNetwork:
      return "network";
  }
  return "?";
}

const char* toString(PathClass cls) {
  switch (cls) {
    case PathClass::kLoc:
      return "LOC";
    case PathClass::kNvl:
      return "NVL";
    case PathClass::kNvb:
      return "NVB";
    case PathClass::kPix:
      return "PIX";
    case PathClass::kPxb:
      return "PXB";
    case PathClass::kPhb:
      return "PHB";
    case PathClass::kNode:
      return "NODE";
    case PathClass::kSys:
      return "SYS";
    case PathClass::kNet:
      return "NET";
    case PathClass::kNone:
      return "DIS";
  }
  return "?";
}

bool parsePathClass(std::string_view text, PathClass* out) {
  static const PathClass kAll[] = {PathClass::kLoc,  PathClass::kNvl, PathClass::kNvb,
                                   PathClass::kPix,  PathClass::kPxb, PathClass::kPhb,
                                   PathClass::kNode, PathClass::kSys, PathClass::kNet};
  for (PathClass c : kAll) {
    if (text == toString(c)) {
      *out = c;
      return true;
    }
  }
  if (text == "SOC") {  // nvidia-smi before NODE existed
    *out = PathClass::kSys;
    return true;
  }
  return false;
}

}  // namespace weft::topo
