#include "src/comm/remote_puts.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <system_error>

#include "src/base/wait.h"

namespace weft {
namespace {

// How long the thread sleeps at most, and a waiter between looks at the abort flag.
constexpr int kPollMs = 100;
constexpr auto kWaitSlice = std::chrono::milliseconds(20);

}  // namespace

Status RemotePuts::start(std::vector<std::unique_ptr<Link>> links, const std::vector<int>& peers,
                         const std::vector<PutTarget>& targets, std::unique_ptr<RemotePuts>* out) {
  if (links.size() != peers.size() || targets.size() != peers.size()) {
    return errorf(weftInternalError, "%zu links and %zu targets for %zu peers", links.size(),
                  targets.size(), peers.size());
  }
  auto r = std::unique_ptr<RemotePuts>(new RemotePuts());
  r->links_ = std::move(links);
  for (size_t i = 0; i < peers.size(); ++i)
    r->streams_.emplace_back(r->links_[i].get(), peers[i], targets[i]);
  r->failures_.resize(peers.size());
  r->wakeFd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (r->wakeFd_ < 0) return errorf(weftSystemError, "eventfd: %s", strerror(errno));
  try {
    r->thread_ = std::thread([p = r.get()] { p->run(); });
  } catch (const std::system_error& e) {
    return errorf(weftSystemError, "starting the window's progress thread: %s", e.what());
  }
  *out = std::move(r);
  return okStatus();
}

RemotePuts::~RemotePuts() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake();
  if (thread_.joinable()) thread_.join();
  if (wakeFd_ >= 0) close(wakeFd_);
}

int RemotePuts::indexOf(int peer) const {
  for (size_t i = 0; i < streams_.size(); ++i) {
    if (streams_[i].peer() == peer) return static_cast<int>(i);
  }
  return -1;
}

void RemotePuts::wake() const {
  const uint64_t one = 1;
  (void)!write(wakeFd_, &one, sizeof(one));
}

Status RemotePuts::failure(int peer) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return failureOf(indexOf(peer));
}

uint64_t RemotePuts::moves() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return moves_;
}

void RemotePuts::awaitMove(uint64_t* moves, std::chrono::milliseconds slice) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (moves_ == *moves && !ended_) changed_.wait_for(lock, slice);
  *moves = moves_;
}

Status RemotePuts::failureOf(int stream) const {
  if (!failure_.ok()) return failure_;
  if (stream >= 0) return failures_[stream];
  for (const Status& s : failures_) {
    if (!s.ok()) return s;
  }
  return okStatus();
}

template <typename Done>
Status RemotePuts::waitFor(std::unique_lock<std::mutex>& lock, Done done, int stream,
                           int64_t timeoutMs, const std::atomic<bool>* aborted, const char* what) {
  Deadline deadline = Deadline::after(timeoutMs);
  uint64_t moves = moves_;
  Status s;
  while (!done()) {
    if (Status f = failureOf(stream); !f.ok()) return f;
    if (ended_) return Status(weftInternalError, "the window's progress thread has ended");
    if (aborted != nullptr && aborted->load()) {
      s = abortedStatus();
    } else if (deadline.expired()) {
      s = errorf(weftTimeout, "timed out after %.1f s %s: nothing moved",
                 static_cast<double>(timeoutMs) / 1000.0, what);
    }
    if (!s.ok()) {
      // The thread may be in the middle of the message: the streams are unusable from here.
      failure_ = s;
      stop_ = true;
      lock.unlock();
      wake();
      thread_.join();
      lock.lock();
      return s;
    }
    changed_.wait_for(lock, kWaitSlice);
    if (moves_ != moves) {  // the timeout counts from the last byte moved
      moves = moves_;
      deadline = Deadline::after(timeoutMs);
    }
  }
  return okStatus();
}

Status RemotePuts::put(int peer, const void* data, size_t bytes, uint64_t offset, int signal,
                       int64_t timeoutMs, const std::atomic<bool>* aborted) {
  const int stream = indexOf(peer);
  if (stream < 0) return errorf(weftInternalError, "no put stream to rank %d", peer);
  std::unique_lock<std::mutex> lock(mutex_);
  if (Status f = failureOf(stream); !f.ok()) return f;
  if (finishing_ || ended_) return Status(weftInvalidUsage, "the window is being deregistered");
  requestStream_ = stream;
  requestData_ = data;
  requestBytes_ = bytes;
  requestOffset_ = offset;
  requestSignal_ = signal;
  requestStarted_ = false;
  wake();
  const std::string what = strprintf("sending a put to rank %d", peer);
  return waitFor(
      lock, [this] { return requestStream_ < 0; }, stream, timeoutMs, aborted, what.c_str());
}

Status RemotePuts::finish(int64_t timeoutMs, const std::atomic<bool>* aborted) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (Status f = failureOf(-1); !f.ok()) return f;
  finishing_ = true;
  wake();
  return waitFor(
      lock, [this] { return ended_; }, -1, timeoutMs, aborted,
      "waiting for the peers across hosts to end their puts");
}

void RemotePuts::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    lock.unlock();
    bool progressed = false;
    step(&progressed);
    lock.lock();
    bool closed = finishing_;
    for (size_t i = 0; i < streams_.size(); ++i)
      closed = closed && streams_[i].closeSent() && streams_[i].peerClosed();
    if (stop_ || closed) {
      ended_ = true;
      changed_.notify_all();
      return;
    }
    if (progressed) {
      ++moves_;
      changed_.notify_all();
      continue;
    }
    lock.unlock();
    sleepUntilReady();
    lock.lock();
  }
}

// Starts what the callers asked for, then moves every stream that has not failed in both
// directions. A stream's failure is recorded, and ends a request for it.
void RemotePuts::step(bool* progressed) {
  int request = -1;
  bool finishing = false;
  std::vector<bool> live(streams_.size());
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = 0; i < streams_.size(); ++i)
      live[i] = failures_[i].ok();
    request = requestStream_;
    finishing = finishing_;
    if (request >= 0 && live[request] && !requestStarted_) {
      streams_[request].startPut(requestData_, requestBytes_, requestOffset_, requestSignal_);
      requestStarted_ = true;
    }
  }
  for (size_t i = 0; i < streams_.size(); ++i) {
    if (!live[i]) continue;
    PutStream& st = streams_[i];
    Status s = st.progressReceive(progressed);
    if (s.ok() && finishing && request < 0 && !st.sending() && !st.closeSent()) st.startClose();
    if (s.ok()) s = st.progressSend(progressed);
    if (!s.ok()) {
      std::lock_guard<std::mutex> lock(mutex_);
      failures_[i] = s;
      live[i] = false;
      *progressed = true;
    }
  }
  if (request >= 0 && (!live[request] || !streams_[request].sending())) {
    // Unless put() gave up on a failed stream and made the next request already.
    std::lock_guard<std::mutex> lock(mutex_);
    if (requestStream_ == request) {
      requestStream_ = -1;
      requestStarted_ = false;
    }
    *progressed = true;
  }
}

void RemotePuts::sleepUntilReady() {
  std::vector<pollfd> fds;
  fds.push_back(pollfd{wakeFd_, POLLIN, 0});
  std::vector<bool> live(streams_.size());
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = 0; i < streams_.size(); ++i)
      live[i] = failures_[i].ok();
  }
  for (size_t i = 0; i < streams_.size(); ++i) {
    const PutStream& st = streams_[i];
    if (!live[i]) continue;
    const int in = st.link()->pollFd(true);
    if (!st.peerClosed() && in >= 0) fds.push_back(pollfd{in, POLLIN | POLLRDHUP, 0});
    const int out = st.link()->pollFd(false);
    if (st.sending() && out >= 0) fds.push_back(pollfd{out, POLLOUT, 0});
  }
  if (poll(fds.data(), fds.size(), kPollMs) > 0 && (fds[0].revents & POLLIN) != 0) {
    uint64_t count = 0;
    (void)!read(wakeFd_, &count, sizeof(count));
  }
}

}  // namespace weft
