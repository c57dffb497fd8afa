#include "tools/weft_run/binding.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <string>
#include <utility>

namespace weft::run {
namespace {

std::string readTopology(int cpu, const char* file) {
  std::ifstream in("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/" + file);
  std::string value;
  return std::getline(in, value) ? value : "";
}

}  // namespace

std::vector<Core> coresOf(const cpu_set_t& allowed) {
  // A core is the CPUs that share its sibling list (core_cpus_list, formerly
  // thread_siblings_list): the same on every CPU of the core, whatever the ids' numbering.
  std::map<std::string, Core> byCore;
  std::map<std::string, std::pair<int, int>> order;  // (package, first CPU) by sibling list
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    std::string siblings = readTopology(cpu, "core_cpus_list");
    if (siblings.empty()) siblings = readTopology(cpu, "thread_siblings_list");
    if (siblings.empty()) siblings = "cpu" + std::to_string(cpu);  // a core of its own
    const std::string package = readTopology(cpu, "physical_package_id");
    byCore[siblings].push_back(cpu);
    order.try_emplace(siblings, package.empty() ? 0 : std::stoi(package), cpu);
  }
  std::vector<std::pair<std::pair<int, int>, Core>> sorted;
  sorted.reserve(byCore.size());
  for (auto& [siblings, cpus] : byCore)
    sorted.emplace_back(order[siblings], std::move(cpus));
  std::sort(sorted.begin(), sorted.end());
  std::vector<Core> cores;
  cores.reserve(sorted.size());
  for (auto& [key, cpus] : sorted)
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
