#include "src/bootstrap/host_identity.h"

#include <unistd.h>

#include <fstream>

#include "src/base/env.h"

namespace weft {

uint64_t hashString(const std::string& text) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : text)
    h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string hostIdentity() {
  if (!env().hostId.empty()) return env().hostId;
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  std::string id = name;
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string bootId;
  if (boot >> bootId) id += ":" + bootId;
  return id;
}

uint64_t hostHash() {
  static const uint64_t hash = hashString(hostIdentity());
  return hash;
}

}  // namespace weft
