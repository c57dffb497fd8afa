// Sizes the tcp transport works with.
#pragma once

#include <cstddef>

namespace weft::tcp {

// Socket send and receive buffers: enough to keep a fast link busy between progress calls.
constexpr int kSocketBufferBytes = 4 << 20;
// A link's stream goes to its sockets in units of this: offset o travels on socket
// (o / kStripeBytes) % nSockets, so several sockets add bandwidth and the receiver knows where
// to look next.
constexpr size_t kStripeBytes = 64 * 1024;
// The buffer peek() exposes received bytes from (a multiple of 8, see Link's alignment rule).
constexpr size_t kStagingBytes = 512 * 1024;

}  // namespace weft::tcp
