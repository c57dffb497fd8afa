#include "src/comm/version_banner.h"

#include <mutex>

#include "src/base/env.h"
#include "src/base/log.h"
#include "weft/weft.h"

namespace weft {
namespace {

const char* onOff(bool on) {
  return on ? "on" : "off";
}

}  // namespace

std::string versionBanner() {
#ifdef WEFT_HAVE_HWLOC
  constexpr bool kHwloc = true;
#else
  constexpr bool kHwloc = false;
#endif
#ifdef WEFT_HAVE_UCX
  constexpr bool kUcx = true;
#else
  constexpr bool kUcx = false;
#endif
  return "Weft " + std::to_string(WEFT_MAJOR) + "." + std::to_string(WEFT_MINOR) + "." +
         std::to_string(WEFT_PATCH) + " (hwloc " + onOff(kHwloc) + ", UCX " + onOff(kUcx) +
         ", CUDA off)";
}

void logVersionBannerOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    WEFT_LOG(LogLevel::kVersion, kInit, "%s", versionBanner().c_str());
    for (const auto& [name, value] : envReport().set)
      WEFT_INFO(kEnv, "%s set by environment to %s", name.c_str(), value.c_str());
  });
}

}  // namespace weft
