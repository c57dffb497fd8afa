#include "src/comm/registry.h"

#include <mutex>
#include <unordered_set>

namespace weft {
namespace {

std::mutex gMutex;
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
}

bool isLiveComm(const Communicator* comm) {
  std::lock_guard<std::mutex> lock(gMutex);
  return live().count(comm) != 0;
}

}  // namespace weft
