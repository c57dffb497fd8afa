#include "tools/weft_topo/png.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace weft::topotool {

std::string findDot() {
  const char* path = getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t pos = 0;
  while (pos <= dirs.size()) {
    size_t end = dirs.find(':', pos);
    std::string dir = dirs.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    if (dir.empty()) dir = ".";
    std::string candidate = dir + "/dot";
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return "";
}

std::string renderPng(const std::string& dotText, const std::string& pngPath) {
  std::string dot = findDot();
  if (dot.empty()) {
    return "--png needs Graphviz's `dot`, which is not installed (not found in PATH); install "
           "graphviz, or write the drawing with --dot > topo.dot and render it elsewhere";
  }
  int fds[2];
  if (pipe(fds) != 0) return std::string("pipe failed: ") + strerror(errno);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[0], 0);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  std::string out = "-o" + pngPath;
  const char* argv[] = {dot.c_str(), "-Tpng", out.c_str(), nullptr};
  pid_t pid;
  int rc = posix_spawn(&pid, dot.c_str(), &actions, nullptr, const_cast<char**>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[0]);
  if (rc != 0) {
    close(fds[1]);
    return "cannot run " + dot + ": " + strerror(rc);
  }
  size_t done = 0;
  while (done < dotText.size()) {
    ssize_t n = write(fds[1], dotText.data() + done, dotText.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  close(fds[1]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return dot + " failed to write " + pngPath;
  }
  return "";
}

}  // namespace weft::topotool
