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

// How long the thread sleeps at most (between looks at the abort flag), and a waiter between
// its looks at the deadline.
constexpr int kPollMs = 100;
constexpr auto kWaitSlice = std::chrono::milliseconds(20);

}  // namespace

Status RemotePuts::start(std::vector<std::unique_ptr<Link>> links, const std::vector<int>& peers,
                         const std::vector<PutTarget>& targets, const std::atomic<bool>* aborted,
                         std::unique_ptr<RemotePuts>* out) {
  if (links.size() != peers.size() || targets.size() != peers.size()) {
    return errorf(weftInternalError, "%zu links and %zu targets for %zu peers", links.size(),
                  targets.size(), peers.size());
  }
  auto r = std::unique_ptr<RemotePuts>(new RemotePuts());
  r->links_ = std::move(links);
  for (size_t i = 0; i < peers.size(); ++i)
    r->streams_.emplace_back(r->links_[i].get(), peers[i], targets[i]);
  r->failures_.resize(peers.size());
  r->aborted_ = aborted;
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

Status RemotePuts::failureOf(int stream) const {
  if (!failure_.ok()) return failure_;
  if (stream >= 0) return failures_[stream];
  for (const Status& s : failures_) {
    if (!s.ok()) return s;
  }
  return okStatus();
}

std::vector<bool> RemotePuts::liveStreams() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<bool> live(streams_.size());
  for (size_t i = 0; i < streams_.size(); ++i)
    live[i] = failures_[i].ok();
  return live;
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

template <typename Done, typename Progress>
Status RemotePuts::waitFor(std::unique_lock<std::mutex>& lock, Done done, Progress progress,
                           int64_t timeoutMs, const char* what) {
  Deadline deadline = Deadline::after(timeoutMs);
  uint64_t seen = progress();
  Status s;
  while (!done()) {
    if (!failure_.ok()) return failure_;
    if (ended_) return Status(weftInternalError, "the window's progress thread has ended");
    if (aborted_ != nullptr && aborted_->load()) {
      s = abortedStatus();
    } else if (deadline.expired()) {
      s = errorf(weftTimeout, "timed out after %.1f s %s: nothing moved",
                 static_cast<double>(timeoutMs) / 1000.0, what);
    }
    if (!s.ok()) {
      failure_ = s;
      stop_ = true;
      lock.unlock();
      wake();
      thread_.join();
      lock.lock();
      return s;
    }
    changed_.wait_for(lock, kWaitSlice);
    if (progress() != seen) {  // the timeout counts from the last progress
      seen = progress();
      deadline = Deadline::after(timeoutMs);
    }
  }
  return okStatus();
}

Status RemotePuts::put(int peer, const void* data, size_t bytes, uint64_t offset, int signal,
                       int64_t timeoutMs) {
  const int stream = indexOf(peer);
  if (stream < 0) return errorf(weftInternalError, "no put stream to rank %d", peer);
  std::unique_lock<std::mutex> lock(mutex_);
  if (Status f = failureOf(stream); !f.ok()) return f;
  if (finishing_ || ended_) return Status(weftInvalidUsage, "the window is being deregistered");
  request_ = Request();
  request_.stream = stream;
  request_.data = data;
  request_.bytes = bytes;
  request_.offset = offset;
  request_.signal = signal;
  wake();
  const std::string what = strprintf("sending a put to rank %d", peer);
  WEFT_RETURN_IF_ERROR(waitFor(
      lock, [this] { return request_.done; }, [this] { return request_.moved; }, timeoutMs,
      what.c_str()));
  return request_.result;
}

Status RemotePuts::finish(int64_t timeoutMs) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!failure_.ok()) return failure_;
  finishing_ = true;
  wake();
  WEFT_RETURN_IF_ERROR(waitFor(
      lock, [this] { return ended_; }, [this] { return moves_; }, timeoutMs,
      "waiting for the peers across hosts to end their puts"));
  return failureOf(-1);
}

void RemotePuts::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    lock.unlock();
    bool progressed = false;
    step(&progressed);
    lock.lock();
    if (failure_.ok() && aborted_ != nullptr && aborted_->load()) failure_ = abortedStatus();
    // Finished once every stream that has not failed has sent its close and seen the peer's.
    bool closed = finishing_;
    for (size_t i = 0; i < streams_.size(); ++i) {
      closed =
          closed && (!failures_[i].ok() || (streams_[i].closeSent() && streams_[i].peerClosed()));
    }
    if (stop_ || closed || !failure_.ok()) {
      if (!failure_.ok()) {
        for (const auto& link : links_)
          link->close();  // the peers' puts and waits fail now, not at their timeout
      }
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

// Starts what put() and finish() asked for, then moves every stream that has not failed in
// both directions. A stream's failure is recorded, and ends a request for it with that failure.
void RemotePuts::step(bool* progressed) {
  int request = -1;
  bool finishing = false;
  std::vector<bool> live = liveStreams();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finishing = finishing_;
    if (request_.stream >= 0 && !request_.done) {
      request = request_.stream;
      if (live[request] && !request_.started) {
        streams_[request].startPut(request_.data, request_.bytes, request_.offset, request_.signal);
        request_.started = true;
      }
    }
  }
  bool requestMoved = false;
  for (size_t i = 0; i < streams_.size(); ++i) {
    if (!live[i]) continue;
    PutStream& st = streams_[i];
    Status s = st.progressReceive(progressed);
    if (s.ok() && finishing && request < 0 && !st.sending() && !st.closeSent()) st.startClose();
    bool sent = false;
    if (s.ok()) s = st.progressSend(&sent);
    *progressed = *progressed || sent;
    requestMoved = requestMoved || (sent && static_cast<int>(i) == request);
    if (!s.ok()) {
      std::lock_guard<std::mutex> lock(mutex_);
      failures_[i] = s;
      live[i] = false;
      *progressed = true;
    }
  }
  if (request < 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (requestMoved) ++request_.moved;
  if (!live[request] || !streams_[request].sending()) {
    request_.done = true;
    request_.result = failures_[request];
    *progressed = true;
  }
}

void RemotePuts::sleepUntilReady() {
  std::vector<pollfd> fds;
  fds.push_back(pollfd{wakeFd_, POLLIN, 0});
  const std::vector<bool> live = liveStreams();
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
