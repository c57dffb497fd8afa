// ShmLink: a Link to a peer on this host over two shared-memory rings. The outgoing ring lives in
// the peer's segment, the incoming one in ours; write and peek touch only memory (no syscalls).
#pragma once

#include <memory>

#include "transports/byte_ring.h"
#include "transports/link.h"
#include "transports/shm/process_watch.h"
#include "transports/shm/shm_segment.h"

namespace weft::shm {

// Bytes copied before the consumer is shown them, so large messages pipeline.
constexpr size_t kPublishBytes = 128 * 1024;

class ShmLink : public Link {
 public:
  ShmLink(int peer, std::shared_ptr<LocalSegment> own, size_t ownIndex, PeerRing peerRing,
          PeerProcess process);
  ~ShmLink() override;

  Status write(const void* data, size_t bytes, size_t* written) override;
  Status peek(const void** data, size_t* bytes) override;
  void consume(size_t bytes) override {
    in_.consume(bytes);
    peerBell_->ring();  // the peer may wait for room
  }
  Status checkPeer() override;
  Doorbell* doorbell() override { return own_->doorbell(); }
  const Doorbell* peerDoorbell() const override { return peerBell_; }
  const Window* ownWindow() const override { return &ownWindow_; }
  const Window* peerWindow() const override { return &peerRing_.window; }
  void close() override;
  void sayFarewell(const Farewell& why) override;
  Farewell receivedFarewell() override;
  const char* kind() const override { return "shm"; }

 private:
  Status closedError() const;

  int peer_;
  std::shared_ptr<LocalSegment> own_;  // holds the incoming ring
  PeerRing peerRing_;                  // holds the outgoing ring
  PeerProcess process_;
  ByteRing in_;
  ByteRing out_;
  Doorbell* peerBell_;
  Window ownWindow_;
};

}  // namespace weft::shm
