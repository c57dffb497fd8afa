// What bootstrap connections carry. Everything read from a socket is checked before use:
// magic, version, the communicator's secret and tag, and ranges.
#pragma once

#include <array>
#include <cstdint>

#include "src/base/socket.h"

namespace weft {

constexpr uint32_t kBootstrapMagic = 0x57465442u;  // "WFTB"
constexpr uint16_t kBootstrapVersion = 1;

using Secret = std::array<uint8_t, 16>;

// A socket address in a fixed layout for the wire.
struct WireAddress {
  uint16_t family = 0;
  uint16_t port = 0;  // host order
  uint32_t scope = 0;
  uint8_t bytes[16] = {};

  static WireAddress from(const SockAddr& address);
  SockAddr toSockAddr() const;
};

// What every rank tells the others at init.
struct RankInfo {
  WireAddress listen;  // the rank's bootstrap listener
  uint64_t hostHash = 0;
  int32_t pid = 0;
  uint32_t locality = 0;  // where the rank runs on its host (topology's packed RankLocality)
  char hostname[64] = {};
};

struct RootHello {
  uint32_t magic = kBootstrapMagic;
  uint16_t version = kBootstrapVersion;
  uint16_t reserved = 0;
  Secret secret{};
  uint64_t commTag = 0;
  int32_t rank = 0;
  int32_t nranks = 0;
  RankInfo info;
};

struct RootReply {
  uint32_t magic = kBootstrapMagic;
  uint16_t version = kBootstrapVersion;
  uint16_t reserved = 0;
  int32_t status = 0;  // a weftResult_t; the table of RankInfo follows only on success
  int32_t nranks = 0;
  char message[240] = {};
};

struct RingHello {
  uint32_t magic = kBootstrapMagic;
  uint16_t version = kBootstrapVersion;
  uint16_t reserved = 0;
  Secret secret{};
  uint64_t commTag = 0;
  int32_t fromRank = 0;
  int32_t toRank = 0;
};

}  // namespace weft
