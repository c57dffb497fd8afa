// Rings and trees as weft-topo prints them: text for people, JSON for programs.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "topology/ring_search.h"
#include "topology/tree_search.h"

namespace weft::topotool {

std::string formatRings(const topo::System& system, const topo::RingPlan& plan);
std::string formatTrees(const topo::System& system, const topo::TreePlan& plan);
nlohmann::json ringsJson(const topo::System& system, const topo::RingPlan& plan);
nlohmann::json treesJson(const topo::System& system, const topo::TreePlan& plan);

}  // namespace weft::topotool
