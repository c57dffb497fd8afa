// The UCX transport, for ranks on different hosts where WEFT_NET chooses it: links over UCP's
// tag API (ucx_link.h) on one UCP worker per communicator, so that on InfiniBand or RoCE the
// bytes go by RDMA, and elsewhere by whatever UCX finds (UCX_TLS chooses: tcp, shared memory).
// Built where CMake finds UCX (WEFT_ENABLE_UCX).
#pragma once

#include <memory>
#include <vector>

#include "transports/transport.h"

namespace weft::ucx {

// ConnectFn. All-gathers once: every rank's worker address. Returns once every link has
// received its peer's hello, checked against the communicator's secret.
Status connect(const TransportContext& ctx, const std::vector<int>& peers,
               std::vector<std::unique_ptr<Link>>* links);

}  // namespace weft::ucx
