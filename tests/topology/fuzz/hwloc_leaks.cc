// Running hwloc under the sanitizers. hwloc 2.9 leaks on some XML errors, in itself (the object
// it is importing; fixed upstream by open-mpi/hwloc#781) and in its libxml2 backend, although
// Weft destroys every topology. LeakSanitizer is told to ignore allocations made inside those
// libraries only, so leaks of Weft's own code are still reported. It can match them only while
// the backend plugin is loaded, and hwloc unloads its plugins with the last topology: one
// topology is kept for the whole run.
#include "tests/topology/fuzz/hwloc_leaks.h"

#ifdef WEFT_HAVE_HWLOC
#include <hwloc.h>
#endif

extern "C" const char* __lsan_default_suppressions() {
  return "leak:libhwloc.so\nleak:hwloc_xml_libxml.so\nleak:libxml2.so\n";
}

namespace weft::topo::fuzz {

void keepHwlocPluginsLoaded() {
#ifdef WEFT_HAVE_HWLOC
  static hwloc_topology_t kept = [] {
    hwloc_topology_t t = nullptr;
    hwloc_topology_init(&t);
    return t;
  }();
  (void)kept;
#endif
}

}  // namespace weft::topo::fuzz
