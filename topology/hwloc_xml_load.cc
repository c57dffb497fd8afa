#include "topology/hwloc_xml_load.h"

#include <fcntl.h>
#include <hwloc.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "topology/hwloc_xml_reader.h"

namespace weft::topo {
namespace {

// What the child's exit status says: hwloc loaded the text, or refused it without crashing.
constexpr int kLoaded = 0;
constexpr int kRefused = 3;
// hwloc loads the largest real files in well under a second.
constexpr int kTrialMs = 30000;

[[noreturn]] void loadInChild(const std::string& xml) {
  // The parent's crash handlers (a sanitizer's, a fuzzer's, a training stack's) must not report
  // the child's crash as the parent's; the parent reports it.
  for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL})
    signal(sig, SIG_DFL);
  struct rlimit noCore = {0, 0};
  setrlimit(RLIMIT_CORE, &noCore);
  // hwloc's assertion message would read as the caller's; the parent's own load prints warnings.
  int devNull = open("/dev/null", O_WRONLY);
  if (devNull >= 0) dup2(devNull, STDERR_FILENO);
  hwloc_topology_t topo = loadHwlocXml(xml);
  if (topo == nullptr) _exit(kRefused);
  hwloc_topology_destroy(topo);
  _exit(kLoaded);
}

// Waits for `child` to end, at most `ms`: a child stuck on a lock that another thread of ours held
// at the fork must not hang us, and is killed. False when the status is unknown (killed, or reaped
// elsewhere because SIGCHLD is ignored).
bool reapWithin(pid_t child, int ms, int* status) {
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, child, 0));
  if (pidfd >= 0) {
    struct pollfd ended = {pidfd, POLLIN, 0};
    int ready;
    while ((ready = poll(&ended, 1, ms)) < 0 && errno == EINTR) {
    }
    close(pidfd);
    if (ready == 0) {
      kill(child, SIGKILL);
      waitpid(child, status, 0);
      return false;
    }
  }
  pid_t done;
  while ((done = waitpid(child, status, 0)) < 0 && errno == EINTR) {
  }
  return done == child;
}

}  // namespace

hwloc_topology_t loadHwlocXml(const std::string& xml) {
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return nullptr;
  hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_ALL);
  hwloc_topology_set_type_filter(topo, HWLOC_OBJ_L3CACHE, HWLOC_TYPE_FILTER_KEEP_ALL);
  // +1: hwloc wants the terminating NUL counted.
  if (hwloc_topology_set_xmlbuffer(topo, xml.c_str(), static_cast<int>(xml.size()) + 1) != 0 ||
      hwloc_topology_load(topo) != 0) {
    hwloc_topology_destroy(topo);
    return nullptr;
  }
  return topo;
}

Status checkHwlocSurvivesXml(const std::string& xml, const std::string& name) {
  pid_t child = fork();
  if (child < 0) return okStatus();
  if (child == 0) loadInChild(xml);
  int status = 0;
  if (!reapWithin(child, kTrialMs, &status)) return okStatus();
  if (WIFEXITED(status) && (WEXITSTATUS(status) == kLoaded || WEXITSTATUS(status) == kRefused)) {
    return okStatus();
  }
  std::string how = WIFSIGNALED(status)
                        ? strprintf("signal %d, %s", WTERMSIG(status), strsignal(WTERMSIG(status)))
                        : strprintf("exit status %d", WEXITSTATUS(status));
  return errorf(weftInvalidArgument,
                "%s: hwloc (%s) crashed loading this XML topology in a trial child process (%s); "
                "the file is malformed in a way Weft's checks do not catch",
                name.c_str(), hwlocDescription().c_str(), how.c_str());
}

}  // namespace weft::topo
