// Runs a test body in N forked processes that find each other the way weft-run's ranks do:
// WEFT_RANK, WEFT_WORLD_SIZE, WEFT_COMM_ID (a free loopback port) and WEFT_COMM_SECRET.
// Call it before the test process creates any thread.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace weft::test {

using EnvList = std::vector<std::pair<std::string, std::string>>;

struct ProcessResult {
  int rank = 0;
  bool exited = false;
  int code = -1;   // exit code when exited
  int signal = 0;  // signal that killed it otherwise
  bool ok() const { return exited && code == 0; }
  std::string describe() const;
};

// Each child runs body(rank) and exits 1 if the body recorded a gtest failure. Children still
// running after timeoutSec are killed (and reported killed by SIGKILL).
std::vector<ProcessResult> runProcesses(int nranks, const EnvList& env,
                                        const std::function<void(int rank)>& body,
                                        int timeoutSec = 300);

// Runs this process on one CPU only (call it before the communicator exists, so the topology
// and the oversubscription check see the binding).
void bindToCpu(int cpu);

// A loopback port nobody listens on right now.
int freeLoopbackPort();

// EXPECTs every result ok.
void expectAllOk(const std::vector<ProcessResult>& results);

// A file per rank under /tmp, named after the test and this process: for each rank's Weft log
// (route() in the rank's process, before init) or anything else a rank writes, read back and
// removed by take() after the run.
class RankFiles {
 public:
  explicit RankFiles(const std::string& name);
  std::string path(int rank) const;
  // Sends the calling process's Weft log (WEFT_DEBUG_FILE) to path(rank).
  void route(int rank) const;
  std::string take(int rank) const;

 private:
  std::string base_;
};

}  // namespace weft::test
