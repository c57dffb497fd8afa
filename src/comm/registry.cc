#include "src/comm/registry.h"

#include <atomic>
#include <mutex>
#include <unordered_set>

namespace weft {
namespace {

std::mutex gMutex;
// Bumped whenever a communicator goes away, so a thread may trust the last handle it checked
// until then without taking the lock.
std::atomic<uint64_t> gGeneration{0};
struct LastChecked {
  const Communicator* comm = nullptr;
  uint64_t generation = 0;
};
thread_local LastChecked tChecked;  // one thread-local, read once per call
std::unordered_set<const Communicator*>& live() {
  static auto* set = new std::unordered_set<const Communicator*>();  // outlives static dtors
  return *set;
}

}  // namespace

void registerComm(Communicator* comm) {
  std::lock_guard<std::mutex> lock(gMutex);
  live().insert(comm);
}

void unregisterComm(Communicator* comm) {
  std::lock_guard<std::mutex> lock(gMutex);
  live().erase(comm);
  gGeneration.fetch_add(1, std::memory_order_release);
}

bool isLiveComm(const Communicator* comm) {
  const uint64_t generation = gGeneration.load(std::memory_order_acquire);
  LastChecked& last = tChecked;
  if (comm == last.comm && generation == last.generation) return true;
  std::lock_guard<std::mutex> lock(gMutex);
  if (live().count(comm) == 0) return false;
  last = {comm, generation};
  return true;
}

}  // namespace weft
