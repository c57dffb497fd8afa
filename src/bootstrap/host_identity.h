// Which ranks share a host: a hash of the host name and the kernel's boot id, so containers on
// one machine with the same name still differ by boot. WEFT_HOSTID replaces it, so tests can
// make ranks of one machine behave as separate hosts.
#pragma once

#include <cstdint>
#include <string>

namespace weft {

std::string hostIdentity();
uint64_t hostHash();
uint64_t hashString(const std::string& text);

}  // namespace weft
