#include "tools/weft_run/launcher.h"

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tools/weft_run/binding.h"
#include "tools/weft_run/hosts.h"
#include "tools/weft_run/output.h"
#include "tools/weft_run/spawn.h"

extern char** environ;

namespace weft::run {
namespace {

using Clock = std::chrono::steady_clock;

// The ports weft-run picks from for a rank 0 on another host, where it cannot ask for a free one.
constexpr int kRemotePortBase = 29500;
constexpr unsigned kRemotePorts = 10000;

std::vector<std::string> splitWords(const std::string& text) {
  std::vector<std::string> words;
  std::stringstream in(text);
  std::string word;
  while (in >> word)
    words.push_back(word);
  return words;
}

size_t environSize() {
  size_t n = 0;
  while (environ[n] != nullptr)
    ++n;
  return n;
}

void say(const std::string& text) {
  fdSink(STDERR_FILENO)("weft-run: " + text + "\n");
}

std::string describeStatus(int status) {
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    return "killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  return "exited with code " + std::to_string(WEXITSTATUS(status));
}

int exitCodeOf(int status) {
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

struct Stream {
  int fd = -1;
  LinePrefixer lines;
};

struct Rank {
  pid_t pid = -1;
  bool running = false;
  Stream out;
  Stream err;
  int inFd = -1;  // a remote rank's stdin: closing it stops the rank
};

class Launcher {
 public:
  explicit Launcher(const Options& o) : o_(o) {}
  ~Launcher();
  int run();

 private:
  bool setUpSignals();
  bool startAll(const LaunchEnv& env);
  void loop();
  int pollTimeoutMs() const;
  void handleSignals();
  void reap();
  bool readStream(Stream& s);
  void checkDeadlines();
  void stop(int sig);
  void signalRunning(int sig);
  int runningCount() const;
  void drainAndFinish();

  // Where rank 0 listens: as asked, else a free port on this host or, where rank 0 runs on
  // another, its name and a port picked at random.
  std::string defaultCommId(std::string* error) const;

  const Options& o_;
  std::vector<Rank> ranks_;
  int signalFd_ = -1;
  sigset_t oldMask_{};
  std::optional<Clock::time_point> timeoutAt_;
  std::optional<Clock::time_point> killAt_;  // SIGKILL stragglers then
  bool stopping_ = false;  // we are stopping ranks: their exits are not new failures
  std::optional<int> failureCode_;
  bool timedOut_ = false;
  int receivedSignal_ = 0;
};

Launcher::~Launcher() {
  for (Rank& r : ranks_) {
    if (r.out.fd >= 0) ::close(r.out.fd);
    if (r.err.fd >= 0) ::close(r.err.fd);
    if (r.inFd >= 0) ::close(r.inFd);
  }
  if (signalFd_ >= 0) ::close(signalFd_);
  ::sigprocmask(SIG_SETMASK, &oldMask_, nullptr);
}

// SIGCHLD and the signals we forward arrive on a signalfd, so poll() sees them with the pipes.
bool Launcher::setUpSignals() {
  sigset_t mask;
  sigemptyset(&mask);
  for (int sig : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) {
    sigaddset(&mask, sig);
  }
  ::sigprocmask(SIG_BLOCK, &mask, &oldMask_);
  signalFd_ = ::signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (signalFd_ < 0) {
    say(std::string("signalfd: ") + std::strerror(errno));
    return false;
  }
  ::signal(SIGPIPE, SIG_IGN);  // a closed stdout must not kill the launcher
  return true;
}

bool Launcher::startAll(const LaunchEnv& env) {
  ranks_.reserve(o_.nranks);
  const std::vector<HostSlots> hosts =
      o_.hosts.empty() ? std::vector<HostSlots>{{"localhost", o_.nranks}} : o_.hosts;
  const std::vector<RankPlace> places = placeRanks(hosts, o_.nranks);
  char cwd[4096] = ".";
  if (::getcwd(cwd, sizeof cwd) == nullptr) cwd[0] = 0;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  const std::vector<Core> cores = ::sched_getaffinity(0, sizeof allowed, &allowed) == 0
                                      ? coresOf(allowed)
                                      : std::vector<Core>{};
  for (int r = 0; r < o_.nranks; ++r) {
    const RankPlace& p = places[static_cast<size_t>(r)];
    const std::string& host = hosts[static_cast<size_t>(p.host)].name;
    std::string error;
    Child c;
    if (isLocalHost(host)) {
      c = spawnChild(o_.command, rankEnvironment(env, r, p.localRank, p.localSize, environ), false,
                     &error, rankCpus(cores, p.localRank, p.localSize, o_.bind));
    } else {
      std::vector<std::string> command = splitWords(o_.rsh);
      command.push_back(host);
      command.push_back(remoteCommandLine(
          remoteVariables(env, r, p.localRank, p.localSize, environ), o_.command, cwd));
      c = spawnChild(command, std::vector<std::string>(environ, environ + environSize()), true,
                     &error);
    }
    if (c.pid < 0) {
      say(error);
      return false;
    }
    ranks_.push_back(
        Rank{c.pid, true, Stream{c.outFd, LinePrefixer(rankPrefix(r, o_.prefix), fdSink(1))},
             Stream{c.errFd, LinePrefixer(rankPrefix(r, o_.prefix), fdSink(2))}, c.inFd});
  }
  return true;
}

std::string Launcher::defaultCommId(std::string* error) const {
  if (o_.hosts.empty()) return pickLocalCommId(error);
  const std::string& first = o_.hosts.front().name;
  if (isLocalHost(first)) {
    // Other hosts must reach it: this host's name, not loopback (unless all are local).
    bool allLocal = true;
    for (const HostSlots& h : o_.hosts)
      allLocal = allLocal && isLocalHost(h.name);
    std::string id = pickLocalCommId(error);
    if (allLocal || id.empty()) return id;
    char name[256] = {};
    ::gethostname(name, sizeof name - 1);
    return std::string(name) + id.substr(id.rfind(':'));
  }
  std::random_device rd;
  return first + ":" + std::to_string(kRemotePortBase + rd() % kRemotePorts);
}

int Launcher::run() {
  if (!setUpSignals()) return 1;
  LaunchEnv env{o_.nranks, o_.commId, "", o_.env};
  std::string error;
  if (env.commId.empty()) env.commId = defaultCommId(&error);
  if (!env.commId.empty()) env.secret = randomSecret(&error);
  if (env.commId.empty() || env.secret.empty()) {
    say(error);
    return 1;
  }
  if (o_.timeoutSeconds > 0) {
    timeoutAt_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(o_.timeoutSeconds));
  }
  bool started = startAll(env);
  if (!started) {
    stopping_ = true;
    stop(SIGTERM);
  }
  loop();
  drainAndFinish();
  if (!started) return kExitCannotRun;
  if (failureCode_) return *failureCode_;
  if (timedOut_) return kExitTimeout;
  if (receivedSignal_) return 128 + receivedSignal_;
  return 0;
}

void Launcher::loop() {
  std::vector<pollfd> fds;
  std::vector<Stream*> streams;
  while (runningCount() > 0) {
    fds.assign(1, pollfd{signalFd_, POLLIN, 0});
    streams.assign(1, nullptr);
    for (Rank& r : ranks_) {
      for (Stream* s : {&r.out, &r.err}) {
        if (s->fd < 0) continue;
        fds.push_back(pollfd{s->fd, POLLIN, 0});
        streams.push_back(s);
      }
    }
    int n = ::poll(fds.data(), fds.size(), pollTimeoutMs());
    if (n < 0 && errno != EINTR) {
      say(std::string("poll: ") + std::strerror(errno));
      stop(SIGKILL);
      return;
    }
    for (size_t i = 1; n > 0 && i < fds.size(); ++i) {
      if (fds[i].revents != 0) readStream(*streams[i]);
    }
    if (n > 0 && fds[0].revents != 0) handleSignals();
    checkDeadlines();
  }
}

int Launcher::pollTimeoutMs() const {
  std::optional<Clock::time_point> next = killAt_;
  if (timeoutAt_ && !timedOut_ && (!next || *timeoutAt_ < *next)) next = timeoutAt_;
  if (!next) return -1;
  auto left = std::chrono::ceil<std::chrono::milliseconds>(*next - Clock::now()).count();
  return left < 0 ? 0 : static_cast<int>(left);
}

void Launcher::handleSignals() {
  signalfd_siginfo info;
  while (::read(signalFd_, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
    int sig = static_cast<int>(info.ssi_signo);
    if (sig == SIGCHLD) {
      reap();
      continue;
    }
    if (receivedSignal_ != 0) {
      // A second request to stop: do not wait for the grace period.
      say(std::string("received SIG") + sigabbrev_np(sig) + " again; killing the ranks");
      signalRunning(SIGKILL);
      continue;
    }
    receivedSignal_ = sig;
    say(std::string("received SIG") + sigabbrev_np(sig) + "; forwarding it to " +
        std::to_string(runningCount()) + " ranks");
    stopping_ = true;
    stop(sig);
  }
}

// SIGCHLDs merge, so collect every exited child, not one per signal.
void Launcher::reap() {
  int status;
  pid_t pid;
  while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
    for (size_t r = 0; r < ranks_.size(); ++r) {
      if (ranks_[r].pid != pid) continue;
      ranks_[r].running = false;
      bool failed = !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
      if (!failed || stopping_) break;
      say("rank " + std::to_string(r) + " " + describeStatus(status));
      failureCode_ = exitCodeOf(status);
      stopping_ = true;
      if (int others = runningCount(); others > 0) {
        say("stopping " + std::to_string(others) + " other rank" + (others > 1 ? "s" : ""));
        stop(SIGTERM);
      }
      break;
    }
  }
}

// When our own output is gone, closing the pipe passes that on: the rank's next write fails
// with EPIPE or SIGPIPE, as it would without a launcher in between.
// Returns true when it read something, so more may be waiting.
bool Launcher::readStream(Stream& s) {
  char buf[64 * 1024];
  ssize_t n = ::read(s.fd, buf, sizeof buf);
  bool open = true;
  if (n > 0) {
    open = s.lines.feed(std::string_view(buf, static_cast<size_t>(n)));
  } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
    s.lines.finish();
    open = false;
  }
  if (!open) {
    ::close(s.fd);
    s.fd = -1;
  }
  return n > 0;
}

void Launcher::checkDeadlines() {
  Clock::time_point now = Clock::now();
  if (timeoutAt_ && !timedOut_ && now >= *timeoutAt_) {
    timedOut_ = true;
    char secs[32];
    std::snprintf(secs, sizeof secs, "%g", o_.timeoutSeconds);
    say(std::string("timed out after ") + secs + " s; stopping " + std::to_string(runningCount()) +
        " running ranks");
    stopping_ = true;
    stop(SIGTERM);
  }
  if (killAt_ && now >= *killAt_) {
    killAt_.reset();
    std::string which;
    for (size_t r = 0; r < ranks_.size(); ++r) {
      if (ranks_[r].running) which += (which.empty() ? "" : ", ") + std::to_string(r);
    }
    if (!which.empty()) {
      say("still running after the grace period (rank " + which + "); sending SIGKILL");
      signalRunning(SIGKILL);
    }
  }
}

// Sends sig to every running rank (and closes the input of remote ones, which the remote shell
// passes on), then SIGKILL to those left after the grace period.
void Launcher::stop(int sig) {
  for (Rank& r : ranks_) {
    if (r.inFd >= 0) ::close(std::exchange(r.inFd, -1));
  }
  signalRunning(sig);
  if (!killAt_) {
    killAt_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                 std::chrono::duration<double>(o_.graceSeconds));
  }
}

// Signals the rank's whole process group, so a wrapper script's children get it too.
void Launcher::signalRunning(int sig) {
  for (Rank& r : ranks_) {
    if (r.running) ::kill(-r.pid, sig);
  }
}

int Launcher::runningCount() const {
  int n = 0;
  for (const Rank& r : ranks_) {
    n += r.running ? 1 : 0;
  }
  return n;
}

// All ranks are gone: take what is left in the pipes without waiting for EOF, since a
// grandchild that inherited a pipe may hold it open (and keep writing) forever.
void Launcher::drainAndFinish() {
  constexpr int kMaxReads = 64;  // several pipe buffers' worth
  for (Rank& r : ranks_) {
    for (Stream* s : {&r.out, &r.err}) {
      for (int i = 0; i < kMaxReads && s->fd >= 0 && readStream(*s); ++i) {
      }
      if (s->fd < 0) continue;
      s->lines.finish();
      ::close(s->fd);
      s->fd = -1;
    }
  }
}

}  // namespace

int launch(const Options& options) {
  return Launcher(options).run();
}

}  // namespace weft::run
