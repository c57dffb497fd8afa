#include "tools/weft_topo/run.h"

#include <nlohmann/json.hpp>

#include "src/base/env.h"
#include "tools/weft_topo/channels_report.h"
#include "tools/weft_topo/describe.h"
#include "tools/weft_topo/drawing.h"
#include "tools/weft_topo/png.h"
#include "tools/weft_topo/wrap.h"
#include "topology/export_json.h"
#include "topology/load.h"
#include "topology/matrix.h"
#include "topology/nccl_xml_writer.h"
#include "topology/paths.h"

namespace weft::topotool {

int run(const Options& o, std::ostream& out, std::ostream& err) {
  topo::System system;
  std::string file = o.topoFile.empty() ? env().topoFile : o.topoFile;
  Status loaded = topo::loadSystemFrom(file, &system);
  if (!loaded.ok()) {
    err << "weft-topo: " << loaded.message() << "\n";
    return file.empty() ? kExitFailure : kExitBadFile;
  }
  if (o.topoFile.empty() && !file.empty()) system.notes.push_back("read from WEFT_TOPO_FILE");

  int ranks = o.ranks > 0 ? o.ranks : topo::defaultRanksPerHost(system, o.device);
  topo::Paths paths(system);
  topo::RankSet rankSet;
  topo::RingPlan rings;
  topo::TreePlan trees;
  if (o.rings || o.trees) {
    Status s = topo::chooseRanks(system, ranks, o.device, &rankSet);
    if (o.ranks == 0) {
      rankSet.note += rankSet.cpu ? "; one per NUMA node by default (--ranks N for more)"
                                  : "; one per GPU by default";
    }
    if (s.ok() && o.rings)
      s = topo::searchRings(system, paths, rankSet, o.hosts, o.channels, &rings);
    if (s.ok() && o.trees)
      s = topo::searchTrees(system, paths, rankSet, o.hosts, o.channels, &trees);
    if (!s.ok()) {
      err << "weft-topo: " << s.message() << "\n";
      return kExitFailure;
    }
  }

  if (!o.png.empty()) {
    std::string problem = renderPng(drawing(system, o.rings ? &rings : nullptr), o.png);
    if (!problem.empty()) {
      err << "weft-topo: " << problem << "\n";
      return kExitFailure;
    }
  }
  if (o.json) {
    nlohmann::json j = nlohmann::json::parse(topo::writeJson(system));
    if (o.rings) j["rings"] = ringsJson(system, rings);
    if (o.trees) j["trees"] = treesJson(system, trees);
    out << j.dump(2) << "\n";
    return kExitOk;
  }
  if (o.dot) {
    out << drawing(system, o.rings ? &rings : nullptr);
    return kExitOk;
  }
  if (o.ncclXml) {
    out << topo::writeNcclXml(system);
    return kExitOk;
  }
  bool sections = o.matrix || o.rings || o.trees;
  if (!sections) {
    out << describeSystem(system);
    if (!o.png.empty()) out << "\nDrawing written to " << o.png << "\n";
    return kExitOk;
  }
  out << system.source << " (" << system.format << ")\n";
  for (const std::string& n : system.notes)
    out << wrap(n, kTextWidth, "  note: ", "        ");
  if (o.matrix) {
    topo::Matrix m = topo::buildMatrix(system);
    out << "\n";
    if (!m.note.empty()) out << wrap(m.note, kTextWidth, "", "") << (m.labels.empty() ? "" : "\n");
    out << topo::formatMatrix(m);
  }
  if (o.rings) out << "\n" << formatRings(system, rings);
  if (o.trees) out << "\n" << formatTrees(system, trees);
  if (!o.png.empty()) out << "\nDrawing written to " << o.png << "\n";
  return kExitOk;
}

}  // namespace weft::topotool
