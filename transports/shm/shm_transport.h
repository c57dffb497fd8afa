// The shared-memory transport, for ranks on one host. Each rank owns one memfd segment with its
// incoming rings; peers map it through /proc/<pid>/fd/<fd>, so nothing is ever named in /dev/shm
// and a crash leaks nothing.
#pragma once

#include <memory>
#include <vector>

#include "transports/transport.h"

namespace weft::shm {

// ConnectFn. All-gathers twice: segment descriptions, then every rank's mapping outcome, so that
// all ranks fail together when one cannot map a peer's segment.
Status connect(const TransportContext& ctx, const std::vector<int>& peers,
               std::vector<std::unique_ptr<Link>>* links);

}  // namespace weft::shm
