// Channel: messages over a Link. Each message carries a header (magic, version, communicator
// tag, sequence number, length) that the receiver checks against what it posted before any
// payload byte is copied: nothing from the wire is trusted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "src/base/status.h"
#include "transports/link.h"
#include "transports/traffic.h"

namespace weft {

// The call a message belongs to, as its sender made it. The layer above decides what the words
// hold (collectives/call_stamp.h); the channel only checks that sender and receiver agree, so
// ranks that made different calls fail instead of reading each other's data.
struct CallStamp {
  uint64_t what = 0;  // the call and its arguments but the count
  uint64_t count = 0;
  uint64_t sequence = 0;  // which of the communicator's calls
  bool operator==(const CallStamp&) const = default;
};

struct MessageHeader {
  uint32_t magic;
  uint16_t version;
  uint16_t flags;
  uint64_t commTag;
  uint64_t sequence;
  uint64_t bytes;
  CallStamp call;
};
static_assert(sizeof(MessageHeader) == 56);

constexpr uint32_t kMessageMagic = 0x5746544du;  // "WFTM"
constexpr uint16_t kMessageVersion = 2;
// Header flag of a point-to-point send's message, by which a receive from any source tells it
// from a collective's.
constexpr uint16_t kPointToPointMessage = 1;

// Takes payload pieces as they arrive, in order, for receives that do more than copy.
class PayloadSink {
 public:
  virtual ~PayloadSink() = default;
  virtual void accept(size_t offset, const void* data, size_t bytes) = 0;
};

struct OutgoingMessage {
  const void* data = nullptr;
  size_t bytes = 0;
  uint16_t flags = 0;
  CallStamp call;
  // Progress, kept by the channel.
  MessageHeader header{};
  size_t headerSent = 0;
  size_t sent = 0;
  bool started = false;
};

struct IncomingMessage {
  void* data = nullptr;  // where payload goes when sink is null
  PayloadSink* sink = nullptr;
  size_t bytes = 0;  // what the receiver expects
  // The call it expects the message to belong to: a message whose stamp or point-to-point flag
  // differs fails with weftInvalidUsage (and keeps its header here, for a fuller message).
  uint16_t flags = 0;
  CallStamp call;
  // Progress, kept by the channel.
  MessageHeader header{};
  size_t headerReceived = 0;
  size_t received = 0;
};

// Whether a received header (complete) belongs to the call the receive expected.
bool callMatches(const IncomingMessage& m);

class Channel {
 public:
  Channel() = default;
  // Completed messages' payloads are added to *traffic (when not null).
  Channel(Link* link, uint64_t commTag, int rank, int peer, Traffic* traffic = nullptr)
      : link_(link), commTag_(commTag), rank_(rank), peer_(peer), traffic_(traffic) {}

  // Move what can be moved now; *done once the whole message is through.
  // A send writes at most `budget` bytes past its header (which goes regardless).
  Status progressSend(OutgoingMessage& m, bool* done, size_t budget = SIZE_MAX);
  Status progressRecv(IncomingMessage& m, bool* done);
  // Reads the next incoming message's header ahead of its receive, as much as has arrived:
  // *header points to it once all of it is in, else is nullptr. The receive takes it from here.
  Status peekHeader(const MessageHeader** header);

  Link* link() const { return link_; }
  int rank() const { return rank_; }
  int peer() const { return peer_; }
  uint64_t sendSequence() const { return sendSequence_; }
  uint64_t recvSequence() const { return recvSequence_; }
  // Stream bytes (headers and padding included) sent and received over the channel's life: what
  // one end has received, the other has sent.
  uint64_t bytesSent() const { return bytesSent_; }
  uint64_t bytesReceived() const { return bytesReceived_; }

 private:
  Status sendSome(OutgoingMessage& m, bool* done, size_t budget);
  Status receiveSome(IncomingMessage& m, bool* done);
  Status checkHeader(const IncomingMessage& m) const;

  Link* link_ = nullptr;
  uint64_t commTag_ = 0;
  int rank_ = -1;
  int peer_ = -1;
  Traffic* traffic_ = nullptr;
  uint64_t sendSequence_ = 0;
  uint64_t recvSequence_ = 0;
  uint64_t bytesSent_ = 0;
  uint64_t bytesReceived_ = 0;
  MessageHeader ahead_{};  // peekHeader's, until the receive takes it
  size_t aheadBytes_ = 0;
};

}  // namespace weft
