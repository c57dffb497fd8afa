// RemotePuts: a window's puts to and from the peers that share no memory with this rank, over
// tcp links of the window's own (one PutStream each), moved by a thread of its own: a peer's
// puts land while this rank computes or runs collectives, as NCCL's proxy thread moves network
// traffic, and a put never waits for its target to call in. The thread sleeps in poll() on the
// sockets when nothing moves, so it costs no core while idle.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "src/base/status.h"
#include "transports/link.h"
#include "transports/put_stream.h"

namespace weft {

class RemotePuts {
 public:
  // One stream per peer: links[i] to peers[i], whose puts land at targets[i].
  static Status start(std::vector<std::unique_ptr<Link>> links, const std::vector<int>& peers,
                      const std::vector<PutTarget>& targets, std::unique_ptr<RemotePuts>* out);
  // Stops the thread without waiting for the peers (see finish()).
  ~RemotePuts();
  RemotePuts(const RemotePuts&) = delete;
  RemotePuts& operator=(const RemotePuts&) = delete;

  bool reaches(int peer) const { return indexOf(peer) >= 0; }
  // Sends a put to `peer` (reaches() it): returns once all of it has gone to the link, so
  // `data` may change after. An error where the stream failed, `aborted` turned true, or
  // timeoutMs passed without a byte going out.
  Status put(int peer, const void* data, size_t bytes, uint64_t offset, int signal,
             int64_t timeoutMs, const std::atomic<bool>* aborted);
  // Why the stream to and from peer failed (the peer gone, a malformed put), or ok. The thread
  // goes on with the other peers' streams.
  Status failure(int peer) const;
  // For a wait on a signal the thread raises: how many times the thread has moved something, and
  // a sleep until that passes *moves or `slice` passes, which updates *moves. The thread raises
  // signals before it counts the move, so a wait that read the count, then the signal, misses
  // no raise.
  uint64_t moves() const;
  void awaitMove(uint64_t* moves, std::chrono::milliseconds slice);
  // Tells every peer this side puts nothing more, and waits until each has said the same: every
  // put they made before has landed. The thread ends then.
  Status finish(int64_t timeoutMs, const std::atomic<bool>* aborted);

 private:
  RemotePuts() = default;
  int indexOf(int peer) const;
  void run();
  void step(bool* progressed);
  void sleepUntilReady();
  // Waits, with the lock held, until done() or a failure (of stream `stream`, or of any where
  // -1), abort or timeoutMs without the thread moving a byte.
  template <typename Done>
  Status waitFor(std::unique_lock<std::mutex>& lock, Done done, int stream, int64_t timeoutMs,
                 const std::atomic<bool>* aborted, const char* what);
  // The failure of a stream, or of the first that failed (-1); with the lock held.
  Status failureOf(int stream) const;
  void wake() const;

  std::vector<std::unique_ptr<Link>> links_;
  std::vector<PutStream> streams_;
  int wakeFd_ = -1;  // an eventfd: put() and finish() rouse the thread's poll

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  // Guarded by mutex_: the request the thread is to send, and what it has done.
  int requestStream_ = -1;
  const void* requestData_ = nullptr;
  size_t requestBytes_ = 0;
  uint64_t requestOffset_ = 0;
  int requestSignal_ = 0;
  bool requestStarted_ = false;  // the thread has begun sending it
  bool finishing_ = false;
  bool stop_ = false;
  bool ended_ = false;
  uint64_t moves_ = 0;            // rises whenever the thread moves anything
  Status failure_;                // of them all: a wait gave up, and stopped the thread
  std::vector<Status> failures_;  // of each stream
  std::thread thread_;
};

}  // namespace weft
