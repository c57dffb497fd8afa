// What Weft checks in an hwloc XML file before handing it to hwloc's loader: hwloc 2.9 (Debian
// 12) trusts some of the file's structure and crashes on files that break it (found by fuzzing;
// fixed upstream in open-mpi/hwloc#783 and #800). A file that breaks it gets a message instead.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "src/base/status.h"

namespace weft::topo {

// The text may hold no character that XML 1.0 forbids (control characters, raw or as references)
// and no '&' that starts no reference.
// The root object must be the Machine (or hwloc 1.x's System), and an object with a cpuset or
// nodeset must also have the complete_ one, and no bitmap (cpuset, nodeset and their kin) may
// start with a comma. Errors name the file, the object and its byte offset.
// Objects that the NVLinkBandwidth distances name but the file lacks, which hwloc drops without a
// word (and their NVLinks with them), are added to `notes` when given.
Status checkHwlocXml(std::string_view text, const std::string& name,
                     std::vector<std::string>* notes = nullptr);

}  // namespace weft::topo
