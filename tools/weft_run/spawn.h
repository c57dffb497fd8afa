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

// The variables one rank is given: its WEFT_* launch variables, then the extra ones.
std::vector<std::pair<std::string, std::string>> launchVariables(const LaunchEnv& env, int rank,
                                                                 int localRank, int localSize);

// This process's environment with the rank's launch variables set (replacing inherited values),
// as "NAME=value" strings: for a rank on this host.
std::vector<std::string> rankEnvironment(const LaunchEnv& env, int rank, int localRank,
                                         int localSize, char** inherited);

// For a rank on another host: this environment's WEFT_* variables, then the launch variables
// (which win).
std::vector<std::pair<std::string, std::string>> remoteVariables(const LaunchEnv& env, int rank,
                                                                 int localRank, int localSize,
                                                                 char** inherited);

// 127.0.0.1:<port> where port was free a moment ago (bound to port 0, then released).
// Empty on failure, with *error set.
std::string pickLocalCommId(std::string* error);

// 32 hex digits from /dev/urandom; empty on failure, with *error set.
std::string randomSecret(std::string* error);

struct Child {
  pid_t pid = -1;
  int outFd = -1;  // read ends of the rank's stdout and stderr pipes, non-blocking
  int errFd = -1;
  int inFd = -1;  // write end of its stdin pipe, where asked for
};

// Starts command in its own process group with stdout/stderr on new pipes and stdin from
// /dev/null, or from a new pipe with withInput (for the remote shell: closing it stops the
// rank). The child gets SIGKILL if weft-run dies, so no rank outlives a killed launcher.
// Returns pid -1 with *error set when the program could not be started (not found, not
// executable: exec's errno comes back over a close-on-exec pipe).
// With `cpus` non-empty, the child runs on those CPUs only (its threads too).
Child spawnChild(const std::vector<std::string>& command, const std::vector<std::string>& env,
                 bool withInput, std::string* error, const std::vector<int>& cpus = {});

}  // namespace weft::run
