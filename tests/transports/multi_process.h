// Runs N ranks as forked processes for transport tests. The parent serves the ranks'
// all-gathers over one socketpair each (a star), so ranks need no bootstrap of their own.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "src/base/status.h"
#include "transports/transport.h"

namespace weft::test {

using AllGatherFn = std::function<Status(const Blob& mine, std::vector<Blob>* all)>;

struct RankInfo {
  int rank = 0;
  int nranks = 0;
  AllGatherFn allGather;
};

struct RunOptions {
  int timeoutMs = 30'000;  // then every rank is killed and the run fails
  // In the parent, each round's blobs just before they go back to the ranks; may change them.
  std::function<void(int round, std::vector<Blob>& blobs)> onGather;
};

struct RankExit {
  pid_t pid = -1;
  bool exited = false;
  int code = -1;   // when exited
  int signal = 0;  // when killed
  bool ok() const { return exited && code == 0; }
  bool killedBy(int sig) const { return !exited && signal == sig; }
  std::string describe() const;
};

// Forks nranks children that each run body (a non-ok Status is printed and gives exit code 1)
// and waits for all of them. Call it before the test creates any thread.
std::vector<RankExit> runRanks(int nranks, const std::function<Status(RankInfo&)>& body,
                               const RunOptions& options = {});

}  // namespace weft::test
