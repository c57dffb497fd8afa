// Starting one rank: its environment, its pipes, its process group.
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

namespace weft::run {

// What weftCommInitFromEnv needs, shared by all ranks of one launch.
struct LaunchEnv {
  int worldSize = 0;
  std::string commId;                                      // HOST:PORT
  std::string secret;                                      // 32 hex digits
  std::vector<std::pair<std::string, std::string>> extra;  // -x, applied last
};

// This process's environment with the WEFT_* variables of one rank and the extra ones set
// (replacing inherited values), as "NAME=value" strings.
std::vector<std::string> rankEnvironment(const LaunchEnv& env, int rank, char** inherited);

// 127.0.0.1:<port> where port was free a moment ago (bound to port 0, then released).
// Empty on failure, with *error set.
std::string pickLocalCommId(std::string* error);

// 32 hex digits from /dev/urandom; empty on failure, with *error set.
std::string randomSecret(std::string* error);

struct Child {
  pid_t pid = -1;
  int outFd = -1;  // read ends of the rank's stdout and stderr pipes, non-blocking
  int errFd = -1;
};

// Starts command in its own process group with stdin from /dev/null and stdout/stderr on new
// pipes. The child gets SIGKILL if weft-run dies, so no rank outlives a killed launcher.
// Returns pid -1 with *error set when the program could not be started (not found, not
// executable: exec's errno comes back over a close-on-exec pipe).
Child spawnChild(const std::vector<std::string>& command, const std::vector<std::string>& env,
                 std::string* error);

}  // namespace weft::run
