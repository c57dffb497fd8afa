// The drawing weft-topo prints (--dot) and renders (--png): one text for both, so that what
// --png shows is what --dot prints.
#pragma once

#include <string>
#include <vector>

#include "topology/export_dot.h"
#include "topology/ring_search.h"

namespace weft::topotool {

// The plan's rings as the drawing shows them: each over the devices its ranks run on (and, across
// hosts, its NICs); rings over the same devices once, labelled with all their numbers.
std::vector<topo::DotRing> ringsToDraw(const topo::RingPlan& plan);

// The system, with the rings over it when `rings` is given.
std::string drawing(const topo::System& system, const topo::RingPlan* rings);

}  // namespace weft::topotool
