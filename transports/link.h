// Link: a reliable, ordered byte stream to one peer, in both directions. Every transport
// (shm, tcp, the in-process loopback) provides one; everything above sees only this.
// All calls are non-blocking: they move what they can now and say how much.
#pragma once

#include <cstddef>
#include <string>

#include "src/base/status.h"
#include "transports/doorbell.h"
#include "transports/window.h"

namespace weft {

// Why a side closed its link, told to the peer where the transport can carry it: the rank whose
// own failure began the closing (this side's rank, or the origin of a farewell it received) and
// that failure's message. Peers that fail because of it pass it on unchanged, so every rank
// names the first failure, not the neighbour that closed last.
struct Farewell {
  int origin = -1;  // -1: no farewell
  std::string message;
};
// The longest message a farewell carries; longer ones are cut.
constexpr size_t kFarewellBytes = 480;

// The error of a link whose peer (-1: unknown) left: its farewell where it gave one, else
// `plain`.
// "rank 1 failed: <message>", "rank 2 closed the link after rank 1 failed: <message>".
Status farewellError(int peer, const Farewell& farewell, const Status& plain);

class Link {
 public:
  virtual ~Link() = default;

  // Copies up to `bytes` of data into the outgoing stream; *written is 0 when it is full.
  virtual Status write(const void* data, size_t bytes, size_t* written) = 0;

  // Exposes incoming bytes that are contiguous in memory, without copying; *bytes is 0 when
  // nothing has arrived. The view stays valid until consume().
  virtual Status peek(const void** data, size_t* bytes) = 0;
  // Releases the first `bytes` of what peek() exposed.
  virtual void consume(size_t bytes) = 0;

  // Copies up to `bytes` of incoming data into data. The default peeks and copies; a transport
  // that can receive straight into the destination overrides it.
  virtual Status read(void* data, size_t bytes, size_t* got);

  // A slower check, made while a wait drags on: is the peer still there? A dead peer or one
  // that closed the link gives weftRemoteError.
  virtual Status checkPeer() { return okStatus(); }

  // The doorbell this side sleeps on, which the peer rings when it writes or consumes; nullptr
  // for transports whose waits the kernel wakes (sockets) or that never wait (loopback).
  virtual Doorbell* doorbell() { return nullptr; }
  // The doorbell the peer sleeps on, for its cpu (nullptr as above).
  virtual const Doorbell* peerDoorbell() const { return nullptr; }
  // The memory face (transports/window.h): this side's window and the peer's; nullptr where the
  // two sides share no memory.
  virtual const Window* ownWindow() const { return nullptr; }
  virtual const Window* peerWindow() const { return nullptr; }
  // The socket to poll while waiting to read (forRead) or write, or -1.
  virtual int pollFd(bool /*forRead*/) const { return -1; }
  // How far writes may run ahead of reads while a message from the peer is arriving, in bytes;
  // 0: no limit. See Executor::sendBudget.
  virtual size_t paceBytes() const { return 0; }

  // Tells the peer this side is gone (abort or destroy); its next calls report it.
  virtual void close() = 0;
  // Leaves `why` for the peer to find once this side closes (call it before close()); a no-op
  // where the transport cannot carry it.
  virtual void sayFarewell(const Farewell& /*why*/) {}
  // The peer's farewell, once it closed with one; origin -1 before that or where it gave none.
  virtual Farewell receivedFarewell() { return {}; }

  // "shm", "tcp" or "loopback", for log lines and error messages.
  virtual const char* kind() const = 0;
};

}  // namespace weft
