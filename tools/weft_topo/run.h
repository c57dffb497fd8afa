// weft-topo's work, apart from the process: loads the system, prints what the options ask, and
// returns the exit status (0 success, 1 usage or tool failure, 2 unreadable topology file).
#pragma once

#include <ostream>

#include "tools/weft_topo/options.h"

namespace weft::topotool {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitBadFile = 2;

int run(const Options& options, std::ostream& out, std::ostream& err);

}  // namespace weft::topotool
