// TcpLink: a Link over one or more tcp sockets to a peer. The byte stream is striped over the
// sockets in kStripeBytes units; both ends walk the stripes in the same order, so the stream
// stays ordered while the sockets move data side by side. One more socket carries nothing but
// the farewell (Link::sayFarewell), which the stream could not: a side may close mid-message.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "src/base/socket.h"
#include "transports/link.h"

namespace weft::tcp {

class TcpLink : public Link {
 public:
  // sockets: the stream's, then the farewell's. paceBytes: see Link::paceBytes
  // (WEFT_SOCKET_PACE_BYTES).
  TcpLink(int peer, std::vector<Socket> sockets, size_t paceBytes);
  ~TcpLink() override;

  Status write(const void* data, size_t bytes, size_t* written) override;
  // Exposes bytes from a staging buffer indexed by stream position, so a view is 8-aligned
  // exactly where the stream is.
  Status peek(const void** data, size_t* bytes) override;
  void consume(size_t bytes) override { stagedFrom_ += bytes; }
  // Takes staged bytes first, then receives straight into data.
  Status read(void* data, size_t bytes, size_t* got) override;
  Status checkPeer() override;
  // The socket the next byte comes from or goes to.
  int pollFd(bool forRead) const override {
    return sockets_[socketFor(forRead ? received_ : sent_)].fd();
  }
  size_t paceBytes() const override { return paceBytes_; }
  void close() override;
  void sayFarewell(const Farewell& why) override;
  Farewell receivedFarewell() override { return readFarewell(0); }
  const char* kind() const override { return "tcp"; }

 private:
  // How much of a transfer at stream position pos may go to one socket call, and which socket.
  size_t socketFor(uint64_t pos) const;
  size_t pieceAt(uint64_t pos, size_t want) const;
  Status receive(char* dst, size_t bytes, size_t* got);
  Status fillStaging();
  Status connectionError(size_t socket, int err);
  // What of the peer's farewell has arrived, waiting up to waitMs for the rest (it was sent
  // before the stream's sockets closed, but on another connection).
  Farewell readFarewell(int waitMs);
  size_t staged() const { return static_cast<size_t>(received_ - stagedFrom_); }

  int peer_;
  std::vector<Socket> sockets_;
  Socket farewellSocket_;
  std::string farewellIn_;  // the peer's farewell as it arrives
  size_t paceBytes_;
  bool closed_ = false;
  bool drained_ = false;                 // the last recv() emptied its socket
  uint64_t sent_ = 0;                    // stream bytes handed to the sockets
  uint64_t received_ = 0;                // stream bytes taken from the sockets
  uint64_t stagedFrom_ = 0;              // stream position of the first unconsumed staged byte
  std::unique_ptr<uint64_t[]> staging_;  // uint64_t: 8-aligned
};

}  // namespace weft::tcp
