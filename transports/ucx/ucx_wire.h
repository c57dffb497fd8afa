// What UCX links send: tags that say the kind of message and its sender, and the hello and
// goodbye that open and close a link.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "transports/link.h"
#include "transports/transport.h"

namespace weft::ucx {

enum class Kind : uint8_t { kHello = 1, kData = 2, kCredit = 3, kGoodbye = 4 };

// The tag of a message of `kind` from `sender`, matched exactly: 4 bits of kind, 20 of sender,
// and for data the stream position where the message starts, modulo 2^40. UCX may deliver
// tagged messages out of order (seen over its tcp transport), so each receive names the
// position it is for; what comes early waits in UCX, within the sender's window.
inline uint64_t tagOf(Kind kind, int sender, uint64_t position = 0) {
  return (static_cast<uint64_t>(kind) << 60) | ((static_cast<uint64_t>(sender) & 0xfffff) << 40) |
         (position & ((uint64_t{1} << 40) - 1));
}
constexpr uint64_t kTagMask = ~uint64_t{0};

// Data messages never cross a multiple of kUnit in stream position; the receive ring and the
// sender's window are kWindow bytes.
constexpr size_t kUnit = 64 * 1024;
constexpr size_t kWindow = 4u << 20;
static_assert(kWindow % kUnit == 0, "the ring holds whole units");

constexpr uint32_t kHelloMagic = 0x58435557;  // "WUCX"
constexpr uint16_t kWireVersion = 1;

struct Hello {
  uint32_t magic = kHelloMagic;
  uint16_t version = kWireVersion;
  uint16_t reserved = 0;
  uint64_t commTag = 0;
  std::array<uint8_t, 16> secret{};
  int32_t fromRank = -1;
  int32_t toRank = -1;
};

struct Goodbye {
  uint64_t streamBytes = 0;  // everything the sender wrote
  // Its farewell (transports/link.h): the origin (-1: none), then the message's bytes.
  int32_t farewellOrigin = -1;
  uint32_t farewellBytes = 0;
  char farewell[kFarewellBytes] = {};
};

Hello makeHello(const TransportContext& ctx, int toRank);
// "" if `h`, which arrived from `peer`, is a hello of this communicator for this rank; else
// what is wrong with it.
std::string helloProblem(const Hello& h, size_t bytes, const TransportContext& ctx, int peer);

}  // namespace weft::ucx
