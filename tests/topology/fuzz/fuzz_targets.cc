#include "tests/topology/fuzz/fuzz_targets.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "topology/file_io.h"
#include "topology/hwloc_xml_reader.h"
#include "topology/nccl_xml_reader.h"
#include "topology/nccl_xml_writer.h"
#include "topology/nvsmi_reader.h"
#include "topology/paths.h"

#ifndef WEFT_FUZZ_READERS_ONLY
#include "topology/export_json.h"
#include "topology/matrix.h"
#include "topology/ranks.h"
#include "topology/ring_search.h"
#include "topology/tree_search.h"
#endif

namespace weft::topo::fuzz {
namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  fprintf(stderr, "fuzz invariant broken: %s\n%s\n", what, detail.c_str());
  abort();
}

// What every accepted system must survive.
void exercise(const System& s) {
  // Export and read back: the same graph.
  std::string xml = writeNcclXml(s);
  System back;
  Status st = parseNcclXml(xml, "export", &back);
  if (!st.ok()) fail("export does not read back", st.message() + "\n" + xml);
  if (canonicalForm(back) != canonicalForm(s)) {
    fail("export reads back to another graph", canonicalForm(s) + "---\n" + canonicalForm(back));
  }
  Paths paths(s);
  for (int a : s.gpus()) {
    for (int b : s.nics()) {
      (void)paths.get(a, b);
      (void)pcieClass(s, a, b);
    }
  }
#ifndef WEFT_FUZZ_READERS_ONLY
  (void)formatMatrix(buildMatrix(s));
  (void)writeJson(s);
  RankSet ranks;
  int n = s.count(NodeKind::kGpu) > 0 ? std::min(4, s.count(NodeKind::kGpu)) : 3;
  if (chooseRanks(s, n, RankDevice::kAuto, &ranks).ok()) {
    ChannelOptions options;
    options.maxChannels = 4;
    RingPlan rings;
    (void)searchRings(s, paths, ranks, s.nics().empty() ? 1 : 2, options, &rings);
    TreePlan trees;
    (void)searchTrees(s, paths, ranks, s.nics().empty() ? 1 : 3, options, &trees);
  }
#endif
}

}  // namespace

int ncclXml(const uint8_t* data, size_t size) {
  System s;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (parseNcclXml(text, "fuzz", &s).ok()) exercise(s);
  return 0;
}

int nvsmiMatrix(const uint8_t* data, size_t size) {
  System s;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (parseNvsmiMatrix(text, "fuzz", &s).ok()) exercise(s);
  return 0;
}

int hwlocXml(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string why;
  if (detectFormat(text, &why) != FileFormat::kHwlocXml) return 0;
  System s;
  if (parseHwlocXml(text, "fuzz", &s).ok()) exercise(s);
  return 0;
}

}  // namespace weft::topo::fuzz
