// The tcp transport, for ranks on different hosts (or any ranks, with WEFT_TRANSPORT=tcp). Each
// rank listens on ctx.localAddress; for each pair the lower rank opens ctx.nSocketsPerPeer
// connections to the higher one, and every connection is authenticated by a hello carrying the
// communicator's secret before it joins a link.
#pragma once

#include <memory>
#include <vector>

#include "transports/transport.h"

namespace weft::tcp {

// ConnectFn. All-gathers once: every rank's listening address.
Status connect(const TransportContext& ctx, const std::vector<int>& peers,
               std::vector<std::unique_ptr<Link>>* links);

}  // namespace weft::tcp
