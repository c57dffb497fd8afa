// Hands XML text to hwloc's loader. hwloc 2.9 (Debian 12) asserts or dereferences a null pointer
// on some malformed files that Weft's own checks (hwloc_xml_check.h) do not foresee; a trial load
// in a child process turns such a crash into an error instead of taking the caller down. Only
// built with hwloc.
#pragma once

#include <string>

#include "src/base/status.h"

struct hwloc_topology;

namespace weft::topo {

// A topology loaded from `xml` with the filters Weft reads (all I/O objects, L3 caches), or
// nullptr when hwloc refuses the text. The caller destroys it with hwloc_topology_destroy.
struct hwloc_topology* loadHwlocXml(const std::string& xml);

// Loads `xml` in a forked child and reports an error naming `name` when hwloc crashed there (a
// signal, or the child vanished); a file hwloc merely refuses passes, for the caller's own load to
// report. Passes too when no child can be started, since the check is a guard and not a reader.
// In a program with threads, POSIX does not promise that hwloc works in the child (a lock held by
// another thread at the fork stays held there); a child that has not finished in 30 s is killed
// and the check passes (where the kernel has pidfd_open, Linux 5.3; elsewhere the wait is plain).
Status checkHwlocSurvivesXml(const std::string& xml, const std::string& name);

}  // namespace weft::topo
