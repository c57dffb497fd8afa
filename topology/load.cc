#include "topology/load.h"

#include "src/base/env.h"
#include "src/base/log.h"
#include "topology/discovery.h"
#include "topology/file_io.h"
#include "topology/hwloc_xml_reader.h"
#include "topology/nccl_xml_reader.h"
#include "topology/nvsmi_reader.h"

namespace weft::topo {

Status parseTopologyText(std::string_view text, const std::string& name, System* out) {
  std::string why;
  switch (detectFormat(text, &why)) {
    case FileFormat::kNcclXml:
      return parseNcclXml(text, name, out);
    case FileFormat::kHwlocXml:
      return parseHwlocXml(text, name, out);
    case FileFormat::kNvsmiMatrix:
      return parseNvsmiMatrix(text, name, out);
    case FileFormat::kUnknown:
      break;
  }
  *out = System();
  return errorf(weftInvalidArgument, "%s: %s", name.c_str(), why.c_str());
}

Status loadTopologyFile(const std::string& path, System* out) {
  std::string text;
  Status s = readTopologyFile(path, &text);
  if (!s.ok()) {
    *out = System();
    return s;
  }
  return parseTopologyText(text, path, out);
}

Status loadSystemFrom(const std::string& topoFile, System* out) {
  if (!topoFile.empty()) {
    WEFT_INFO(kTopo, "topology from %s (WEFT_TOPO_FILE)", topoFile.c_str());
    return loadTopologyFile(topoFile, out);
  }
  return discoverLocalSystem(out);
}

Status loadLocalSystem(System* out) {
  return loadSystemFrom(env().topoFile, out);
}

}  // namespace weft::topo
