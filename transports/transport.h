// How a transport sets up its links at communicator init. Every rank calls each transport's
// connect function once, collectively (the function all-gathers once through the bootstrap),
// with the peers it must reach over that transport; peer lists are symmetric.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "src/base/blob.h"
#include "src/base/socket.h"
#include "src/base/status.h"
#include "src/base/wait.h"
#include "transports/link.h"
#include "transports/window.h"

namespace weft {

struct TransportContext {
  int rank = 0;
  int nranks = 0;
  uint64_t commTag = 0;              // the communicator's id, carried in every handshake
  std::array<uint8_t, 16> secret{};  // every connection must present it
  Deadline deadline;
  const AbortFlag* abort = nullptr;
  SockAddr localAddress;  // this rank's address for incoming tcp connections (port 0)
  int nSocketsPerPeer = 1;
  size_t socketPaceBytes = 0;  // Link::paceBytes of tcp links
  size_t shmRingBytes = 1u << 20;
  // The regions of each rank's shared-memory window (transports/window.h), whole pages each, and
  // what lays out this rank's window before any peer can see it (nothing: zero bytes).
  std::array<size_t, kWindowRegions> shmWindowRegions{1u << 20, 1u << 20, 2u << 20};
  std::function<void(const Window&)> formatWindow;
  // Collective: every rank passes its blob and gets all of them, indexed by rank.
  std::function<Status(const Blob& mine, std::vector<Blob>* all)> allGather;
};

// Fills links[i] with a link to peers[i].
using ConnectFn = Status (*)(const TransportContext& ctx, const std::vector<int>& peers,
                             std::vector<std::unique_ptr<Link>>* links);

}  // namespace weft
