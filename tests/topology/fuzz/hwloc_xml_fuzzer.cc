// libFuzzer target: hwloc XML through the library's reader (hwloc's own loader underneath).
// Seeds: tests/topology/data/*.hwloc.xml and fuzz/corpus/hwloc*.xml. Run:
// topology_hwloc_xml_fuzzer -max_total_time=60 corpus_dir
#include <cstdlib>

#include "tests/topology/fuzz/fuzz_targets.h"
#include "tests/topology/fuzz/hwloc_leaks.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // hwloc reports some inconsistencies of a topology on stderr; the fuzzer's log needs none.
  setenv("HWLOC_HIDE_ERRORS", "2", 0);
  weft::topo::fuzz::keepHwlocPluginsLoaded();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return weft::topo::fuzz::hwlocXml(data, size);
}
