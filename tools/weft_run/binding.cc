#include "tools/weft_run/binding.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <string>
#include <tuple>

namespace weft::run {
namespace {

int readTopology(int cpu, const char* file) {
  std::ifstream in("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/" + file);
  int value = -1;
  return in >> value ? value : -1;
}

}  // namespace

std::vector<Core> coresOf(const cpu_set_t& allowed) {
  std::map<std::tuple<int, int, int>, Core> byCore;  // (package, core id, cpu if unknown)
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    const int package = readTopology(cpu, "physical_package_id");
    const int core = readTopology(cpu, "core_id");
    byCore[{package, core, core < 0 ? cpu : -1}].push_back(cpu);
  }
  std::vector<Core> cores;
  for (auto& [key, cpus] : byCore)
    cores.push_back(std::move(cpus));
  return cores;
}

std::vector<int> rankCpus(const std::vector<Core>& cores, int localRank, int localSize, Bind how) {
  const size_t n = cores.size();
  const size_t rank = static_cast<size_t>(localRank);
  const size_t size = static_cast<size_t>(localSize);
  if (how == Bind::kNone || size == 0 || n == 0 || (how == Bind::kAuto && size > n)) return {};
  // Shares differ by at most one core. More ranks than cores (kCores only): a core each, in turn.
  const size_t begin = size > n ? rank % n : rank * n / size;
  const size_t end = size > n ? begin + 1 : (rank + 1) * n / size;
  std::vector<int> cpus;
  for (size_t c = begin; c < end; ++c)
    cpus.insert(cpus.end(), cores[c].begin(), cores[c].end());
  std::sort(cpus.begin(), cpus.end());
  return cpus;
}

}  // namespace weft::run
