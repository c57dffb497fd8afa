#include "src/comm/registry.h"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <random>
#include <unordered_map>

namespace weft {
namespace {

std::mutex gMutex;
// Bumped whenever a communicator goes away, so a thread may trust the last handle it checked
// until then without taking the lock.
std::atomic<uint64_t> gGeneration{0};
struct LastChecked {
  weftComm_t handle = nullptr;
  Communicator* comm = nullptr;
  uint64_t generation = 0;
};
thread_local LastChecked tChecked;  // one thread-local, read once per call

struct Table {
  std::unordered_map<uintptr_t, Communicator*> byHandle;
  std::unordered_map<const Communicator*, uintptr_t> byComm;
  // Tokens start at a random value, so that a stray small integer or an old process's handle is
  // unlikely to name a live communicator, and are never reused.
  uintptr_t next = (static_cast<uintptr_t>(std::random_device()()) << 20 | 1) << 4;
};
Table& table() {
  static auto* t = new Table();  // outlives static destructors
  return *t;
}

}  // namespace

weftComm_t registerComm(Communicator* comm) {
  std::lock_guard<std::mutex> lock(gMutex);
  Table& t = table();
  const uintptr_t token = t.next;
  t.next += 16;
  t.byHandle.emplace(token, comm);
  t.byComm.emplace(comm, token);
  return reinterpret_cast<weftComm_t>(token);  // NOLINT(performance-no-int-to-ptr): a token
}

void unregisterComm(Communicator* comm) {
  std::lock_guard<std::mutex> lock(gMutex);
  Table& t = table();
  auto it = t.byComm.find(comm);
  if (it != t.byComm.end()) {
    t.byHandle.erase(it->second);
    t.byComm.erase(it);
  }
  gGeneration.fetch_add(1, std::memory_order_release);
}

Communicator* liveComm(weftComm_t handle) {
  const uint64_t generation = gGeneration.load(std::memory_order_acquire);
  LastChecked& last = tChecked;
  if (handle == last.handle && generation == last.generation) return last.comm;
  std::lock_guard<std::mutex> lock(gMutex);
  auto it = table().byHandle.find(reinterpret_cast<uintptr_t>(handle));
  if (it == table().byHandle.end()) return nullptr;
  last = {handle, it->second, generation};
  return it->second;
}

void forEachLiveComm(const std::function<void(Communicator&)>& fn) {
  std::lock_guard<std::mutex> lock(gMutex);
  for (auto& [handle, comm] : table().byHandle)
    fn(*comm);
}

}  // namespace weft
