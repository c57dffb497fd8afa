#include "transports/ucx/ucx_wire.h"

#include "src/base/status.h"

namespace weft::ucx {

Hello makeHello(const TransportContext& ctx, int toRank) {
  Hello h;
  h.commTag = ctx.commTag;
  h.secret = ctx.secret;
  h.fromRank = ctx.rank;
  h.toRank = toRank;
  return h;
}

std::string helloProblem(const Hello& h, size_t bytes, const TransportContext& ctx, int peer) {
  if (bytes != sizeof(Hello) || h.magic != kHelloMagic) return "not a Weft UCX hello";
  if (h.version != kWireVersion) {
    return strprintf("wire version %u, not %u", static_cast<unsigned>(h.version),
                     static_cast<unsigned>(kWireVersion));
  }
  if (h.secret != ctx.secret) return "wrong secret";
  if (h.commTag != ctx.commTag) return "another communicator's hello";
  if (h.fromRank != peer || h.toRank != ctx.rank) {
    return strprintf("a hello from rank %d to rank %d", h.fromRank, h.toRank);
  }
  return "";
}

}  // namespace weft::ucx
