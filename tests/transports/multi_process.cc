#include "tests/transports/multi_process.h"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "src/base/log.h"
#include "src/base/wait.h"

namespace weft::test {
namespace {

// Blocking, whole-buffer I/O on the rank's end of its socketpair.
bool writeAll(int fd, const void* data, size_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    ssize_t n = send(fd, p, bytes, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    bytes -= static_cast<size_t>(n);
  }
  return true;
}

bool readAll(int fd, void* data, size_t bytes) {
  char* p = static_cast<char*>(data);
  while (bytes > 0) {
    ssize_t n = recv(fd, p, bytes, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    bytes -= static_cast<size_t>(n);
  }
  return true;
}

// Frames: the rank sends [u32 size][blob]; the parent answers [u32 count]([u32 size][blob])*.
Status rankAllGather(int fd, int nranks, const Blob& mine, std::vector<Blob>* all) {
  uint32_t size = static_cast<uint32_t>(mine.size());
  if (!writeAll(fd, &size, sizeof(size)) || !writeAll(fd, mine.data(), mine.size())) {
    return Status(weftSystemError, "test all-gather: the parent is gone");
  }
  uint32_t count = 0;
  if (!readAll(fd, &count, sizeof(count)) || count != static_cast<uint32_t>(nranks)) {
    return Status(weftSystemError, "test all-gather: aborted (a rank left early?)");
  }
  all->assign(count, Blob());
  for (auto& blob : *all) {
    if (!readAll(fd, &size, sizeof(size))) return Status(weftSystemError, "test all-gather: EOF");
    blob.resize(size);
    if (!readAll(fd, blob.data(), size)) return Status(weftSystemError, "test all-gather: EOF");
  }
  return okStatus();
}

[[noreturn]] void runChild(int rank, int nranks, int fd,
                           const std::function<Status(RankInfo&)>& body) {
  setLogRank(rank);
  RankInfo info;
  info.rank = rank;
  info.nranks = nranks;
  info.allGather = [fd, nranks](const Blob& mine, std::vector<Blob>* all) {
    return rankAllGather(fd, nranks, mine, all);
  };
  Status s = body(info);
  if (!s.ok())
    fprintf(stderr, "rank %d (pid %d) failed: %s\n", rank, getpid(), s.message().c_str());
  _exit(s.ok() ? 0 : 1);  // no atexit handlers or gtest teardown in the child
}

// The parent's side of one rank.
struct Child {
  pid_t pid = -1;
  int fd = -1;
  Blob inbox;                   // bytes received, not yet parsed
  std::vector<Blob> submitted;  // whole blobs, one per round, oldest first
  bool eof = false;
  bool reaped = false;
  RankExit exit;
};

bool takeBlob(Child& c) {
  uint32_t size = 0;
  if (c.inbox.size() < sizeof(size)) return false;
  memcpy(&size, c.inbox.data(), sizeof(size));
  if (c.inbox.size() < sizeof(size) + size) return false;
  c.submitted.emplace_back(c.inbox.begin() + sizeof(size), c.inbox.begin() + sizeof(size) + size);
  c.inbox.erase(c.inbox.begin(), c.inbox.begin() + sizeof(size) + size);
  return true;
}

void pump(Child& c) {
  char buffer[65536];
  for (;;) {
    ssize_t n = recv(c.fd, buffer, sizeof(buffer), MSG_DONTWAIT);
    if (n > 0) {
      c.inbox.insert(c.inbox.end(), buffer, buffer + n);
      continue;
    }
    if (n == 0 || (errno != EAGAIN && errno != EINTR)) c.eof = true;
    break;
  }
  while (takeBlob(c)) {
  }
}

class Parent {
 public:
  Parent(std::vector<Child>& children, const RunOptions& options)
      : children_(children), options_(options) {}

  void serve();

 private:
  bool allReaped() const;
  void poll();
  void gatherIfComplete();
  void failGathers();
  void reap();

  std::vector<Child>& children_;
  const RunOptions& options_;
  int round_ = 0;
  bool gathersFailed_ = false;
};

void Parent::serve() {
  Deadline deadline = Deadline::after(options_.timeoutMs);
  while (!allReaped()) {
    poll();
    gatherIfComplete();
    reap();
    if (deadline.expired()) {
      for (auto& c : children_) {
        if (!c.reaped) {
          fprintf(stderr, "test: rank (pid %d) still runs after %d ms: killing it\n", c.pid,
                  options_.timeoutMs);
          kill(c.pid, SIGKILL);
        }
      }
      deadline = Deadline::never();
    }
  }
}

bool Parent::allReaped() const {
  for (const auto& c : children_) {
    if (!c.reaped) return false;
  }
  return true;
}

void Parent::poll() {
  std::vector<pollfd> fds;
  for (auto& c : children_)
    fds.push_back({c.eof ? -1 : c.fd, POLLIN, 0});
  ::poll(fds.data(), fds.size(), 5);
  for (size_t i = 0; i < children_.size(); ++i) {
    if (fds[i].revents != 0) pump(children_[i]);
  }
}

void Parent::gatherIfComplete() {
  bool anyWaiting = false;
  bool allReady = true;
  for (const auto& c : children_) {
    anyWaiting = anyWaiting || !c.submitted.empty();
    allReady = allReady && !c.submitted.empty();
  }
  if (!anyWaiting || gathersFailed_) return;
  if (!allReady) {
    // A rank that has left can never join this round: release the ones waiting on it.
    for (const auto& c : children_) {
      if (c.submitted.empty() && c.eof) return failGathers();
    }
    return;
  }
  std::vector<Blob> blobs;
  for (auto& c : children_) {
    blobs.push_back(std::move(c.submitted.front()));
    c.submitted.erase(c.submitted.begin());
  }
  if (options_.onGather) options_.onGather(round_, blobs);
  ++round_;
  Blob reply;
  auto put = [&reply](const void* p, size_t n) {
    reply.insert(reply.end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + n);
  };
  uint32_t count = static_cast<uint32_t>(blobs.size());
  put(&count, sizeof(count));
  for (const auto& b : blobs) {
    uint32_t size = static_cast<uint32_t>(b.size());
    put(&size, sizeof(size));
    put(b.data(), b.size());
  }
  // The ranks wait in a blocking read, so a blocking write cannot stall for long.
  for (auto& c : children_)
    writeAll(c.fd, reply.data(), reply.size());
}

void Parent::failGathers() {
  gathersFailed_ = true;
  for (auto& c : children_)
    shutdown(c.fd, SHUT_RDWR);
}

void Parent::reap() {
  for (auto& c : children_) {
    if (c.reaped) continue;
    int status = 0;
    if (waitpid(c.pid, &status, WNOHANG) != c.pid) continue;
    c.reaped = true;
    c.exit.pid = c.pid;
    c.exit.exited = WIFEXITED(status);
    c.exit.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    c.exit.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    c.eof = true;
  }
}

}  // namespace

std::string RankExit::describe() const {
  if (exited) return "pid " + std::to_string(pid) + " exited with " + std::to_string(code);
  return "pid " + std::to_string(pid) + " killed by signal " + std::to_string(signal);
}

std::vector<RankExit> runRanks(int nranks, const std::function<Status(RankInfo&)>& body,
                               const RunOptions& options) {
  fflush(stdout);
  fflush(stderr);
  std::vector<Child> children(nranks);
  for (int r = 0; r < nranks; ++r) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
      perror("socketpair");
      abort();
    }
    pid_t pid = fork();
    if (pid < 0) {
      perror("fork");
      abort();
    }
    if (pid == 0) {
      close(sv[0]);
      for (int i = 0; i < r; ++i)
        close(children[i].fd);
      runChild(r, nranks, sv[1], body);
    }
    close(sv[1]);
    children[r].pid = pid;
    children[r].fd = sv[0];
  }
  Parent(children, options).serve();
  std::vector<RankExit> exits;
  for (auto& c : children) {
    close(c.fd);
    exits.push_back(c.exit);
  }
  return exits;
}

}  // namespace weft::test
