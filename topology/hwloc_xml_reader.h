// Reads hwloc XML (lstopo file.xml) through hwloc's own XML loader, so the file means what hwloc
// says it means. Files written by hwloc 3 are rewritten to the 2.x format first when the hwloc
// Weft was built with is older (their OS device types and top-level infos changed). hwloc sees
// the text only after Weft's checks (hwloc_xml_check.h) and a trial load in a child process
// (hwloc_xml_load.h), so a file that would crash hwloc gives an error instead.
#pragma once

#include <string>
#include <string_view>

#include "src/base/status.h"
#include "topology/system.h"

namespace weft::topo {

// Without hwloc support in this build, returns an error saying so.
Status parseHwlocXml(std::string_view text, const std::string& name, System* out);

// True when this build of Weft uses hwloc (discovery and hwloc XML).
bool hwlocAvailable();
// "hwloc 2.9.0" or "no hwloc".
std::string hwlocDescription();

// hwloc 3.0 XML rewritten for an hwloc 2.x loader. Exposed for tests; `text` is returned
// unchanged when it is not version 3 XML.
Status downgradeHwlocXml(std::string_view text, const std::string& name, std::string* out);

}  // namespace weft::topo
