// hwloc under LeakSanitizer: suppressions for hwloc's own leaks (see hwloc_leaks.cc).
#pragma once

namespace weft::topo::fuzz {

// Keeps hwloc's plugins loaded until the process ends, so leak reports can name them. Call it
// before the first hwloc XML is read; it does nothing in a build without hwloc.
void keepHwlocPluginsLoaded();

}  // namespace weft::topo::fuzz
