// The first lines a job logs (WEFT_DEBUG=VERSION or more, once per process): Weft's version and
// build options, and at INFO every WEFT_* setting the environment set, as NCCL's INFO output
// starts.
#pragma once

#include <string>

namespace weft {

// "Weft 0.1.0 (hwloc on, UCX on, CUDA off)".
std::string versionBanner();
// Logs the banner and the environment's settings the first time it is called in a process.
void logVersionBannerOnce();

}  // namespace weft
