// What weft-trace concludes from the dumps of a job's ranks: per communicator, the ranks whose
// dumps are missing, the first collective the ranks called differently, the ranks that are
// behind (and what they were doing), and each rank's error.
#pragma once

#include <string>
#include <vector>

#include "tools/weft_trace/dump.h"

namespace weft::trace {

// "rank 2", "ranks 0 and 3", "ranks 0-5, 7 and 9".
std::string ranksText(const std::vector<int>& ranks);

// The report, a paragraph per communicator (in the order of their tags).
std::string analyze(const std::vector<RankDump>& dumps);

}  // namespace weft::trace
