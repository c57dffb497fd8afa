// The --version text of every tool: "weft-run (Weft 0.1.0)".
#pragma once

#include <string>

#include "weft/weft.h"

namespace weft::tools {

inline std::string versionText(const std::string& tool) {
  return tool + " (Weft " + std::to_string(WEFT_MAJOR) + "." + std::to_string(WEFT_MINOR) + "." +
         std::to_string(WEFT_PATCH) + ")";
}

}  // namespace weft::tools
