#include "transports/channel.h"

#include <algorithm>

namespace weft {
namespace {

// Payloads are padded to 8 bytes so every message starts 8-aligned in the stream, and pieces a
// link exposes in place are aligned for the element type.
constexpr size_t kAlign = 8;
size_t paddingOf(size_t bytes) {
  return (kAlign - bytes % kAlign) % kAlign;
}

}  // namespace

Status Channel::progressSend(OutgoingMessage& m, bool* done, size_t budget) {
  const size_t before = m.headerSent + m.sent;
  Status s = sendSome(m, done, budget);
  bytesSent_ += m.headerSent + m.sent - before;
  if (*done && traffic_ != nullptr) traffic_->sent += m.bytes;
  return s;
}

Status Channel::progressRecv(IncomingMessage& m, bool* done) {
  if (aheadBytes_ > 0 && m.headerReceived == 0) {  // counted when peekHeader read it
    m.header = ahead_;
    m.headerReceived = aheadBytes_;
    aheadBytes_ = 0;
    if (m.headerReceived == sizeof(MessageHeader)) WEFT_RETURN_IF_ERROR(checkHeader(m));
  }
  const size_t before = m.headerReceived + m.received;
  Status s = receiveSome(m, done);
  bytesReceived_ += m.headerReceived + m.received - before;
  if (*done && traffic_ != nullptr) traffic_->received += m.bytes;
  return s;
}

Status Channel::peekHeader(const MessageHeader** header) {
  *header = nullptr;
  while (aheadBytes_ < sizeof(MessageHeader)) {
    size_t n = 0;
    WEFT_RETURN_IF_ERROR(link_->read(reinterpret_cast<char*>(&ahead_) + aheadBytes_,
                                     sizeof(MessageHeader) - aheadBytes_, &n));
    if (n == 0) return okStatus();
    aheadBytes_ += n;
    bytesReceived_ += n;
  }
  *header = &ahead_;
  return okStatus();
}

Status Channel::sendSome(OutgoingMessage& m, bool* done, size_t budget) {
  *done = false;
  if (!m.started) {
    m.header = MessageHeader{kMessageMagic, kMessageVersion, m.flags,
                             commTag_,      sendSequence_++, static_cast<uint64_t>(m.bytes),
                             m.call};
    m.started = true;
  }
  while (m.headerSent < sizeof(MessageHeader)) {
    size_t n = 0;
    WEFT_RETURN_IF_ERROR(link_->write(reinterpret_cast<const char*>(&m.header) + m.headerSent,
                                      sizeof(MessageHeader) - m.headerSent, &n));
    if (n == 0) return okStatus();
    m.headerSent += n;
  }
  while (m.sent < m.bytes && budget > 0) {
    size_t n = 0;
    WEFT_RETURN_IF_ERROR(link_->write(static_cast<const char*>(m.data) + m.sent,
                                      std::min(m.bytes - m.sent, budget), &n));
    if (n == 0) return okStatus();
    m.sent += n;
    budget -= n;
  }
  const size_t total = m.bytes + paddingOf(m.bytes);
  while (m.sent < total && budget > 0) {
    static const char kZeros[kAlign] = {};
    size_t n = 0;
    WEFT_RETURN_IF_ERROR(link_->write(kZeros, std::min(total - m.sent, budget), &n));
    if (n == 0) return okStatus();
    m.sent += n;
    budget -= n;
  }
  if (m.sent < total) return okStatus();
  *done = true;
  return okStatus();
}

bool callMatches(const IncomingMessage& m) {
  return (m.header.flags & kPointToPointMessage) == (m.flags & kPointToPointMessage) &&
         m.header.call == m.call;
}

Status Channel::checkHeader(const IncomingMessage& m) const {
  const MessageHeader& h = m.header;
  if (h.magic != kMessageMagic || h.version != kMessageVersion) {
    return errorf(weftInternalError,
                  "corrupt message from rank %d: magic 0x%08x version %u (expected 0x%08x v%u)",
                  peer_, h.magic, h.version, kMessageMagic, kMessageVersion);
  }
  if (h.commTag != commTag_) {
    return errorf(weftInternalError, "message from rank %d belongs to another communicator", peer_);
  }
  if (h.sequence != recvSequence_) {
    return errorf(weftInternalError, "message from rank %d out of order: #%llu, expected #%llu",
                  peer_, static_cast<unsigned long long>(h.sequence),
                  static_cast<unsigned long long>(recvSequence_));
  }
  if (!callMatches(m)) {
    return errorf(weftInvalidUsage, "rank %d made another call than rank %d (message #%llu)", peer_,
                  rank_, static_cast<unsigned long long>(h.sequence));
  }
  if (h.bytes != m.bytes) {
    return errorf(weftInvalidUsage,
                  "rank %d sent %llu bytes where rank %d expected %llu (message #%llu): the "
                  "ranks called with different counts, types or collectives",
                  peer_, static_cast<unsigned long long>(h.bytes), rank_,
                  static_cast<unsigned long long>(m.bytes),
                  static_cast<unsigned long long>(h.sequence));
  }
  return okStatus();
}

Status Channel::receiveSome(IncomingMessage& m, bool* done) {
  *done = false;
  if (m.headerReceived < sizeof(MessageHeader)) {
    while (m.headerReceived < sizeof(MessageHeader)) {
      size_t n = 0;
      WEFT_RETURN_IF_ERROR(link_->read(reinterpret_cast<char*>(&m.header) + m.headerReceived,
                                       sizeof(MessageHeader) - m.headerReceived, &n));
      if (n == 0) return okStatus();
      m.headerReceived += n;
    }
    WEFT_RETURN_IF_ERROR(checkHeader(m));
  }
  while (m.received < m.bytes) {
    if (m.sink == nullptr) {
      size_t n = 0;
      WEFT_RETURN_IF_ERROR(
          link_->read(static_cast<char*>(m.data) + m.received, m.bytes - m.received, &n));
      if (n == 0) return okStatus();
      m.received += n;
    } else {
      const void* view = nullptr;
      size_t avail = 0;
      WEFT_RETURN_IF_ERROR(link_->peek(&view, &avail));
      if (avail == 0) return okStatus();
      size_t n = std::min(avail, m.bytes - m.received);
      m.sink->accept(m.received, view, n);
      link_->consume(n);
      m.received += n;
    }
  }
  const size_t total = m.bytes + paddingOf(m.bytes);
  while (m.received < total) {
    char skip[kAlign];
    size_t n = 0;
    WEFT_RETURN_IF_ERROR(link_->read(skip, total - m.received, &n));
    if (n == 0) return okStatus();
    m.received += n;
  }
  ++recvSequence_;
  *done = true;
  return okStatus();
}

}  // namespace weft
