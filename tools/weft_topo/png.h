// Drawing with Graphviz: runs `dot -Tpng` when it is installed.
#pragma once

#include <string>

namespace weft::topotool {

// Where `dot` is on PATH; empty when it is not installed.
std::string findDot();

// Renders `dotText` into `pngPath`. Returns "" on success, else a message for the user.
std::string renderPng(const std::string& dotText, const std::string& pngPath);

}  // namespace weft::topotool
