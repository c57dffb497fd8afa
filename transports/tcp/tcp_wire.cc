#include "transports/tcp/tcp_wire.h"

#include <cstring>

namespace weft::tcp {

Blob encodeAddress(const SockAddr* address) {
  AddressBlob a{};
  a.magic = kAddressMagic;
  a.version = kWireVersion;
  if (address != nullptr) {
    a.length = static_cast<uint16_t>(address->length);
    memcpy(a.address, &address->storage, address->length);
  }
  Blob blob(sizeof(a));
  memcpy(blob.data(), &a, sizeof(a));
  return blob;
}

Status decodeAddress(const Blob& blob, int rank, SockAddr* out, bool* listening) {
  AddressBlob a;
  if (blob.size() != sizeof(a)) {
    return errorf(weftInternalError, "tcp: rank %d sent a %zu-byte address (expected %zu)", rank,
                  blob.size(), sizeof(a));
  }
  memcpy(&a, blob.data(), sizeof(a));
  if (a.magic != kAddressMagic || a.version != kWireVersion || a.length > sizeof(a.address)) {
    return errorf(weftInternalError,
                  "tcp: rank %d sent a malformed address (magic 0x%08x, version %u): mismatched "
                  "Weft versions?",
                  rank, a.magic, a.version);
  }
  *out = SockAddr();
  out->length = a.length;
  memcpy(&out->storage, a.address, a.length);
  *listening = a.length > 0;
  if (*listening && out->family() != AF_INET && out->family() != AF_INET6) {
    return errorf(weftInternalError, "tcp: rank %d sent an address of family %d", rank,
                  out->family());
  }
  return okStatus();
}

Hello makeHello(const TransportContext& ctx, int toRank, int socketIndex) {
  Hello h{};
  h.magic = kHelloMagic;
  h.version = kWireVersion;
  memcpy(h.secret, ctx.secret.data(), sizeof(h.secret));
  h.commTag = ctx.commTag;
  h.fromRank = ctx.rank;
  h.toRank = toRank;
  h.socketIndex = socketIndex;
  h.socketCount = ctx.nSocketsPerPeer;
  return h;
}

std::string helloProblem(const Hello& h, const TransportContext& ctx) {
  if (h.magic != kHelloMagic) return strprintf("not a Weft hello (magic 0x%08x)", h.magic);
  if (h.version != kWireVersion) {
    return strprintf("wire version %u, this rank speaks %u", h.version, kWireVersion);
  }
  // Constant time, so the secret cannot be guessed byte by byte.
  uint8_t diff = 0;
  for (size_t i = 0; i < sizeof(h.secret); ++i)
    diff |= h.secret[i] ^ ctx.secret[i];
  if (diff != 0) return "wrong secret";
  if (h.commTag != ctx.commTag) {
    return strprintf("for communicator %016llx, not %016llx",
                     static_cast<unsigned long long>(h.commTag),
                     static_cast<unsigned long long>(ctx.commTag));
  }
  if (h.toRank != ctx.rank) return strprintf("meant for rank %d", h.toRank);
  if (h.fromRank < 0 || h.fromRank >= ctx.nranks) return strprintf("from rank %d", h.fromRank);
  if (h.socketCount != ctx.nSocketsPerPeer || h.socketIndex < 0 || h.socketIndex >= h.socketCount) {
    return strprintf("socket %d of %d, this rank uses %d per peer (WEFT_NSOCKS_PERPEER differs?)",
                     h.socketIndex, h.socketCount, ctx.nSocketsPerPeer);
  }
  return {};
}

}  // namespace weft::tcp
