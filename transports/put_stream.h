// PutStream: the memory face (one-sided puts and signals) emulated with messages, over a Link
// that carries nothing else, for peers that share no memory (tcp). Each put travels as a header
// (where in the peer's part, how many bytes, which signal) and its payload; the peer applies
// the puts in order as it progresses: the payload lands in its part, then the signal rises, so
// a waiter that sees the signal (acquire) sees the data. Nothing from the wire is trusted: a put
// outside the part, for a signal that does not exist, or with a bad header fails the stream
// before a byte of it is written. Single-threaded: one thread drives a stream.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "src/base/status.h"
#include "transports/link.h"

namespace weft {

// Where the peer's puts land on this side: its part of the window, and the signals it raises.
struct PutTarget {
  char* base = nullptr;
  size_t bytes = 0;
  std::atomic<uint64_t>* signals = nullptr;
  int nSignals = 0;
};

class PutStream {
 public:
  PutStream(Link* link, int peer, PutTarget target) : link_(link), peer_(peer), target_(target) {}

  // Starts sending a put of `bytes` from `data` (which must stay until sent) to `offset` of the
  // peer's part, raising its signal `signal` after; bytes 0 only raises it. One at a time.
  void startPut(const void* data, size_t bytes, uint64_t offset, int signal);
  // Starts the last message: this side puts nothing more (after the put being sent, if any).
  void startClose();
  // Whether a put or the close is still being sent.
  bool sending() const { return sendKind_ != 0; }
  bool closeSent() const { return closeSent_; }
  Status progressSend(bool* progressed);
  // Applies what has arrived of the peer's puts; an error for a malformed one, or once the link
  // fails. After the peer's close, nothing more is read.
  Status progressReceive(bool* progressed);
  bool peerClosed() const { return peerClosed_; }
  Link* link() const { return link_; }
  int peer() const { return peer_; }

  struct Header {
    uint32_t magic;
    uint16_t version;
    uint16_t kind;  // kPut or kClose
    uint32_t signal;
    uint32_t reserved;
    uint64_t offset;
    uint64_t bytes;
  };
  static_assert(sizeof(Header) == 32);
  static constexpr uint32_t kMagic = 0x57465450u;  // "WFTP"
  static constexpr uint16_t kVersion = 1;
  static constexpr uint16_t kPut = 1;
  static constexpr uint16_t kClose = 2;

 private:
  Status checkHeader() const;

  Link* link_;
  int peer_;
  PutTarget target_;

  Header out_{};
  uint16_t sendKind_ = 0;  // what is being sent; 0: nothing
  const char* sendData_ = nullptr;
  size_t headerSent_ = 0;
  size_t payloadSent_ = 0;
  bool closeSent_ = false;

  Header in_{};
  size_t headerReceived_ = 0;
  size_t payloadReceived_ = 0;
  bool peerClosed_ = false;
};

}  // namespace weft
