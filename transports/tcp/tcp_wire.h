// What the tcp transport puts on the wire before a link starts: the address blob every rank
// all-gathers, and the hello each connection opens with (and the accepting side answers with).
//
// Address blob (host byte order): {magic "WFTA", version, address length, sockaddr bytes[128]};
// length 0 means the rank listens nowhere (it has no tcp peers, or listening failed).
//
// Hello (48 bytes, host byte order): {magic "WFTH", version, reserved, secret[16], commTag,
// fromRank, toRank, socketIndex, socketCount}.
#pragma once

#include <cstdint>
#include <string>

#include "src/base/socket.h"
#include "src/base/status.h"
#include "transports/transport.h"

namespace weft::tcp {

constexpr uint32_t kAddressMagic = 0x41544657u;  // "WFTA"
constexpr uint32_t kHelloMagic = 0x48544657u;    // "WFTH"
constexpr uint16_t kWireVersion = 1;

struct AddressBlob {
  uint32_t magic;
  uint16_t version;
  uint16_t length;
  uint8_t address[sizeof(sockaddr_storage)];
};
static_assert(sizeof(AddressBlob) == 136);

// address may be null: this rank does not listen.
Blob encodeAddress(const SockAddr* address);
// *listening is false for a rank that does not listen.
Status decodeAddress(const Blob& blob, int rank, SockAddr* out, bool* listening);

struct Hello {
  uint32_t magic;
  uint16_t version;
  uint16_t reserved;
  uint8_t secret[16];
  uint64_t commTag;
  int32_t fromRank;
  int32_t toRank;
  int32_t socketIndex;
  int32_t socketCount;
};
static_assert(sizeof(Hello) == 48);

Hello makeHello(const TransportContext& ctx, int toRank, int socketIndex);

// Empty when the hello is from this communicator, for this rank, with ctx's socket count;
// otherwise what is wrong with it, for the log. The caller checks who sent it.
std::string helloProblem(const Hello& h, const TransportContext& ctx);

}  // namespace weft::tcp
