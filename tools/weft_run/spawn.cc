#include "tools/weft_run/spawn.h"

#include <sched.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <string_view>
#include <utility>

namespace weft::run {
namespace {

std::string errnoText(const char* what) {
  return std::string(what) + ": " + std::strerror(errno);
}

// Closes the fds it holds on every return path of spawnChild.
struct Fds {
  std::vector<int> fds;
  ~Fds() {
    for (int fd : fds) {
      if (fd >= 0) ::close(fd);
    }
  }
  int keep(size_t i) { return std::exchange(fds[i], -1); }
};

bool makePipe(int fds[2]) {
  return ::pipe2(fds, O_CLOEXEC) == 0;
}

// Runs in the child between fork and exec: async-signal-safe calls only.
[[noreturn]] void execChild(char* const* argv, char* const* envp, int in, int out, int err,
                            int report, pid_t parent, const cpu_set_t* cpus) {
  ::setpgid(0, 0);
  if (cpus != nullptr && ::sched_setaffinity(0, sizeof *cpus, cpus) != 0) {
    // The CPUs went away since weft-run looked (a cpuset changed): run unbound, and say so.
    static const char kUnbound[] = "weft-run: a rank could not be bound to its cores; unbound\n";
    (void)!::write(err, kUnbound, sizeof kUnbound - 1);
  }
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);  // the launcher died before prctl took effect
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGCHLD}) {
    ::signal(sig, SIG_DFL);
  }
  if (::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0) ::_exit(127);
  ::execvpe(argv[0], argv, envp);
  int e = errno;
  (void)!::write(report, &e, sizeof e);
  ::_exit(127);
}

std::vector<char*> cStrings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (const std::string& s : strings) {
    out.push_back(const_cast<char*>(s.c_str()));
  }
  out.push_back(nullptr);
  return out;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> launchVariables(const LaunchEnv& env, int rank,
                                                                 int localRank, int localSize) {
  std::vector<std::pair<std::string, std::string>> vars = {
      {"WEFT_RANK", std::to_string(rank)},
      {"WEFT_WORLD_SIZE", std::to_string(env.worldSize)},
      {"WEFT_LOCAL_RANK", std::to_string(localRank)},
      {"WEFT_LOCAL_SIZE", std::to_string(localSize)},
      {"WEFT_COMM_ID", env.commId},
      {"WEFT_COMM_SECRET", env.secret},
  };
  vars.insert(vars.end(), env.extra.begin(), env.extra.end());
  return vars;
}

std::vector<std::string> rankEnvironment(const LaunchEnv& env, int rank, int localRank,
                                         int localSize, char** inherited) {
  std::map<std::string, std::string> set;
  for (const auto& [name, value] : launchVariables(env, rank, localRank, localSize))
    set[name] = value;
  std::vector<std::string> out;
  for (char** e = inherited; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    if (!set.contains(std::string(entry.substr(0, entry.find('='))))) out.emplace_back(entry);
  }
  for (const auto& [name, value] : set) {
    out.push_back(name + "=" + value);
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> remoteVariables(const LaunchEnv& env, int rank,
                                                                 int localRank, int localSize,
                                                                 char** inherited) {
  std::vector<std::pair<std::string, std::string>> vars;
  for (char** e = inherited; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    const size_t eq = entry.find('=');
    if (entry.starts_with("WEFT_") && eq != std::string_view::npos) {
      vars.emplace_back(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
    }
  }
  // env(1) applies its assignments in order, so these win over the inherited ones.
  for (auto& v : launchVariables(env, rank, localRank, localSize))
    vars.push_back(std::move(v));
  return vars;
}

std::string pickLocalCommId(std::string* error) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = errnoText("socket");
    return "";
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  std::string commId;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    *error = errnoText("picking a free port");
  } else {
    commId = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  }
  ::close(fd);
  return commId;
}

std::string randomSecret(std::string* error) {
  unsigned char bytes[16];
  int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = errnoText("/dev/urandom");
    return "";
  }
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = ::read(fd, bytes + got, sizeof bytes - got);
    if (n <= 0 && errno != EINTR) break;
    if (n > 0) got += static_cast<size_t>(n);
  }
  ::close(fd);
  if (got < sizeof bytes) {
    *error = "short read from /dev/urandom";
    return "";
  }
  static const char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char b : bytes) {
    hex.push_back(kHex[b >> 4]);
    hex.push_back(kHex[b & 15]);
  }
  return hex;
}

Child spawnChild(const std::vector<std::string>& command, const std::vector<std::string>& env,
                 bool withInput, std::string* error, const std::vector<int>& cpus) {
  Child child;
  // 0,1: stdout pipe; 2,3: stderr pipe; 4,5: exec error report; 6: stdin (/dev/null, or the
  // read end of 6,7).
  Fds f{std::vector<int>(8, -1)};
  if (!makePipe(&f.fds[0]) || !makePipe(&f.fds[2]) || !makePipe(&f.fds[4]) ||
      (withInput && !makePipe(&f.fds[6]))) {
    *error = errnoText("pipe");
    return child;
  }
  if (!withInput) f.fds[6] = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (f.fds[6] < 0) {
    *error = errnoText("/dev/null");
    return child;
  }
  // Build argv and envp before fork: the child may only make async-signal-safe calls.
  std::vector<char*> argv = cStrings(command);
  std::vector<char*> envp = cStrings(env);
  cpu_set_t cpuSet;
  CPU_ZERO(&cpuSet);
  for (int cpu : cpus)
    CPU_SET(cpu, &cpuSet);
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    *error = errnoText("fork");
    return child;
  }
  if (pid == 0) {
    execChild(argv.data(), envp.data(), f.fds[6], f.fds[1], f.fds[3], f.fds[5], parent,
              cpus.empty() ? nullptr : &cpuSet);
  }

  ::setpgid(pid, pid);  // also here, so signalling the group works before the child runs
  ::close(f.keep(5));
  int execErrno = 0;
  ssize_t n;
  do {
    n = ::read(f.fds[4], &execErrno, sizeof execErrno);
  } while (n < 0 && errno == EINTR);
  if (n == sizeof execErrno) {
    ::waitpid(pid, nullptr, 0);
    *error = "cannot run '" + command[0] + "'" + (cpus.empty() ? "" : " bound to its CPUs") + ": " +
             std::strerror(execErrno);
    return child;
  }
  child.pid = pid;
  child.outFd = f.keep(0);
  child.errFd = f.keep(2);
  child.inFd = f.keep(7);
  ::fcntl(child.outFd, F_SETFL, O_NONBLOCK);
  ::fcntl(child.errFd, F_SETFL, O_NONBLOCK);
  return child;
}

}  // namespace weft::run
