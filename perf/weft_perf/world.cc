#include "perf/weft_perf/world.h"

#include <cstdint>
#include <cstdlib>
#include <utility>

#include "perf/weft_perf/weft_error.h"

namespace weft::perf {
namespace {

// The rank and size variables of the launchers weftCommInitFromEnv knows (weft.h): a launch
// sets both of one pair.
constexpr std::pair<const char*, const char*> kLaunchVariables[] = {
    {"WEFT_RANK", "WEFT_WORLD_SIZE"}, {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
    {"PMI_RANK", "PMI_SIZE"},         {"SLURM_PROCID", "SLURM_NTASKS"},
    {"RANK", "WORLD_SIZE"},
};

bool isSet(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0';
}

}  // namespace

bool launchedByLauncher() {
  for (const auto& [rank, size] : kLaunchVariables) {
    if (isSet(rank) && isSet(size)) return true;
  }
  // Half of Weft's own pair is a launch gone wrong, not a single process: weftCommInitFromEnv
  // then names the missing variable. (RANK alone may be another program's.)
  return isSet("WEFT_RANK") || isSet("WEFT_WORLD_SIZE");
}

World::World(int threads) : comms_(static_cast<size_t>(threads), nullptr) {
  if (launchedByLauncher()) joinLaunch();
  if (launch_ != nullptr && threads == 1) {
    comms_[0] = std::exchange(launch_, nullptr);
    return;
  }
  if (launch_ != nullptr)
    checkWeft(weftCommDestroy(std::exchange(launch_, nullptr)), "weftCommDestroy", nullptr);
  initThreads();
}

World::~World() {
  for (weftComm_t c : comms_) {
    if (c != nullptr) weftCommDestroy(c);
  }
  if (control_ != nullptr) weftCommDestroy(control_);
  if (launch_ != nullptr) weftCommDestroy(launch_);
}

void World::joinLaunch() {
  checkWeft(weftCommInitFromEnv(&launch_), "weftCommInitFromEnv", nullptr);
  checkWeft(weftCommCount(launch_, &processes_), "weftCommCount", launch_);
  checkWeft(weftCommUserRank(launch_, &process_), "weftCommUserRank", launch_);
  // WEFT_COMM_ID names the launch's rendezvous, which launch_ has used: the ids made next get
  // rendezvous of their own rather than race the launch's root for its address.
  unsetenv("WEFT_COMM_ID");
  if (processes_ == 1) return;
  weftConfig_t config = WEFT_CONFIG_INITIALIZER;
  config.logCalls = 0;
  config.commName = "weft-perf control";
  checkWeft(weftCommSplit(launch_, 0, process_, &control_, &config), "weftCommSplit", launch_);
}

// As nccl-tests: process 0 makes the id and sends it to the others; every thread is a rank.
void World::initThreads() {
  if (processes_ == 1) {
    checkWeft(weftCommInitAll(comms_.data(), threads(), nullptr), "weftCommInitAll", nullptr);
    return;
  }
  weftUniqueId id{};
  if (process_ == 0) checkWeft(weftGetUniqueId(&id), "weftGetUniqueId", nullptr);
  checkWeft(weftBroadcast(&id, &id, sizeof id, weftUint8, 0, control_, nullptr), "weftBroadcast",
            control_);
  checkWeft(weftGroupStart(), "weftGroupStart", nullptr);
  weftResult_t first = weftSuccess;
  for (int t = 0; t < threads() && first == weftSuccess; ++t) {
    first = weftCommInitRank(&comms_[t], nranks(), id, rank(t));
  }
  const weftResult_t ended = weftGroupEnd();  // also after a failed call: leave the group
  checkWeft(first != weftSuccess ? first : ended, "weftCommInitRank", nullptr);
}

bool World::allOk(bool mine) const {
  if (control_ == nullptr) return mine;
  int32_t ok = mine ? 1 : 0;
  checkWeft(weftAllReduce(&ok, &ok, 1, weftInt32, weftMin, control_, nullptr), "weftAllReduce",
            control_);
  return ok == 1;
}

void World::abort(int thread) {
  weftCommAbort(std::exchange(comms_[thread], nullptr));
}

}  // namespace weft::perf
