// The ranks of a run: processes x threads, as nccl-tests' -t. Processes come from the launcher
// (weftCommInitFromEnv); without one this process runs alone. Each thread is a rank with a
// communicator of its own: rank = process * threads + thread.
#pragma once

#include <vector>

#include "weft/weft.h"

namespace weft::perf {

// Whether a launcher's rank variables are set (those weftCommInitFromEnv reads).
bool launchedByLauncher();

class World {
 public:
  // Creates the communicators; throws WeftError where a weft call fails.
  explicit World(int threads);
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  int processes() const { return processes_; }
  int process() const { return process_; }
  int threads() const { return static_cast<int>(comms_.size()); }
  int nranks() const { return processes_ * threads(); }
  int rank(int thread) const { return process_ * threads() + thread; }
  // The communicator that thread `thread` measures with.
  weftComm_t comm(int thread) const { return comms_[thread]; }
  // One rank per process, whose calls stay out of the COLL log (weftConfig_t.logCalls = 0): for
  // weft-perf's own agreement. NULL with a single process.
  weftComm_t control() const { return control_; }

  // Every process learns whether all of them are ok (an unlogged call with several).
  bool allOk(bool mine) const;
  // Aborts thread's communicator, so that its peers stop waiting for it: for the thread itself,
  // which must not use it again.
  void abort(int thread);

 private:
  void joinLaunch();
  void initThreads();

  int processes_ = 1;
  int process_ = 0;
  weftComm_t launch_ = nullptr;  // from the launcher; a measured one when threads == 1
  weftComm_t control_ = nullptr;
  std::vector<weftComm_t> comms_;
};

}  // namespace weft::perf
