#include "transports/shm/shm_link.h"

#include <algorithm>
#include <utility>

namespace weft::shm {

ShmLink::ShmLink(int peer, std::shared_ptr<LocalSegment> own, size_t ownIndex, PeerRing peerRing,
                 PeerProcess process)
    : peer_(peer),
      own_(std::move(own)),
      peerRing_(std::move(peerRing)),
      process_(std::move(process)),
      peerBell_(peerRing_.doorbell),
      ownWindow_(own_->window()) {
  in_ = ByteRing(own_->control(ownIndex), own_->data(ownIndex), own_->ringBytes(),
                 std::min(kPublishBytes, own_->ringBytes()));
  out_ = ByteRing(peerRing_.control, peerRing_.data, peerRing_.capacity,
                  std::min(kPublishBytes, peerRing_.capacity));
}

// Both rings are still mapped here: members go after the destructor body.
ShmLink::~ShmLink() {
  close();
}

Status ShmLink::closedError() const {
  return farewellError(peer_, in_.farewell(),
                       errorf(weftRemoteError, "shm link to rank %d (pid %d) was closed", peer_,
                              static_cast<int>(process_.pid())));
}

Status ShmLink::write(const void* data, size_t bytes, size_t* written) {
  *written = 0;
  if (out_.closed()) return closedError();
  *written = out_.write(data, bytes);
  if (*written > 0) peerBell_->ring();  // the peer may wait for data
  return okStatus();
}

Status ShmLink::peek(const void** data, size_t* bytes) {
  // What the peer wrote before closing is still delivered.
  if (!in_.peekUnlessEnded(data, bytes)) return closedError();
  return okStatus();
}

Status ShmLink::checkPeer() {
  bool closed = in_.closed() || out_.closed();
  if (!closed && !process_.exited()) return okStatus();
  // What the peer sent before it went is still delivered, unless what we sent can never be
  // taken: then the wait is surely for the write.
  const void* view = nullptr;
  size_t incoming = 0;
  in_.peek(&view, &incoming);
  const RingControl* out = peerRing_.control;
  bool outgoing =
      out->head.load(std::memory_order_acquire) != out->tail.load(std::memory_order_acquire);
  if (incoming > 0 && !outgoing) return okStatus();
  if (closed) return closedError();
  return errorf(weftRemoteError, "rank %d (pid %d) exited", peer_,
                static_cast<int>(process_.pid()));
}

void ShmLink::sayFarewell(const Farewell& why) {
  out_.leaveFarewell(why);
}

Farewell ShmLink::receivedFarewell() {
  return in_.farewell();
}

void ShmLink::close() {
  out_.close();
  in_.close();
  peerBell_->wake();  // a sleeping peer notices at once
}

}  // namespace weft::shm
