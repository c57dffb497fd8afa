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
  // One stream per peer: links[i] to peers[i], whose puts land at targets[i]. Once `aborted`
  // turns true (the communicator's abort), the thread closes every link, so the peers learn it.
  static Status start(std::vector<std::unique_ptr<Link>> links, const std::vector<int>& peers,
                      const std::vector<PutTarget>& targets, const std::atomic<bool>* aborted,
                      std::unique_ptr<RemotePuts>* out);
  // Stops the thread without waiting for the peers (see finish()); no put lands after.
  ~RemotePuts();
  RemotePuts(const RemotePuts&) = delete;
  RemotePuts& operator=(const RemotePuts&) = delete;

  bool reaches(int peer) const { return indexOf(peer) >= 0; }
  // Sends a put to `peer` (reaches() it): returns once all of it has gone to the link, so
  // `data` may change after. An error where the stream to peer failed before all of it went, on
  // an abort, or where timeoutMs passed without a byte of it going out (the streams are unusable
  // after those two, as a message may be cut).
  Status put(int peer, const void* data, size_t bytes, uint64_t offset, int signal,
             int64_t timeoutMs);
  // Why the stream to and from peer failed (the peer gone, a malformed put), or why they all did
  // (an abort, a put given up); ok if neither. The thread goes on with the other peers' streams.
  Status failure(int peer) const;
  // For a wait on a signal the thread raises: how many times the thread has moved something, and
  // a sleep until that passes *moves or `slice` passes, which updates *moves. The thread raises
  // signals before it counts the move, so a wait that read the count, then the signal, misses
  // no raise.
  uint64_t moves() const;
  void awaitMove(uint64_t* moves, std::chrono::milliseconds slice);
  // Tells every peer this side puts nothing more, and waits until each has said the same: every
  // put they made before has landed. The thread ends then. Peers whose streams failed are passed
  // over (the others still get the close), and the first of their failures is returned.
  Status finish(int64_t timeoutMs);

 private:
  // What put() asked the thread to send, and how it went; guarded by mutex_.
  struct Request {
    int stream = -1;  // -1: none
    const void* data = nullptr;
    size_t bytes = 0;
    uint64_t offset = 0;
    int signal = 0;
    bool started = false;
    bool done = false;
    uint64_t moved = 0;  // rises whenever bytes of it go out
    Status result;
  };

  RemotePuts() = default;
  int indexOf(int peer) const;
  void run();
  void step(bool* progressed);
  void sleepUntilReady();
  // With the lock held: the failure of a stream, or of the first that failed (-1).
  Status failureOf(int stream) const;
  // Which streams have not failed, by index (takes the lock).
  std::vector<bool> liveStreams() const;
  // Waits, with the lock held, until done(), a failure of them all, an abort, or timeoutMs
  // without progress() changing. An abort or a timeout stops the thread (a message may be cut).
  template <typename Done, typename Progress>
  Status waitFor(std::unique_lock<std::mutex>& lock, Done done, Progress progress,
                 int64_t timeoutMs, const char* what);
  void wake() const;

  std::vector<std::unique_ptr<Link>> links_;
  std::vector<PutStream> streams_;
  const std::atomic<bool>* aborted_ = nullptr;
  int wakeFd_ = -1;  // an eventfd: put() and finish() rouse the thread's poll

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  // Guarded by mutex_.
  Request request_;
  bool finishing_ = false;
  bool stop_ = false;
  bool ended_ = false;
  uint64_t moves_ = 0;            // rises whenever the thread moves anything
  Status failure_;                // of them all: an abort, or a put given up
  std::vector<Status> failures_;  // of each stream
  std::thread thread_;
};

}  // namespace weft
