// Sets of logical CPUs, in the three spellings topology files use: NCCL's hex words
// ("00000000,000fffff"), hwloc's bitmaps ("0x00000303,,0x03030303") and lists ("0-19,40-59").
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace weft::topo {

class CpuSet {
 public:
  CpuSet() = default;

  // NCCL affinity / sysfs cpumap: comma-separated 32-bit hex words, most significant first.
  static std::optional<CpuSet> parseHexWords(std::string_view text);
  // hwloc bitmap: like the above with an optional "0x" per word and empty words meaning 0.
  // A leading "0xf...f," (an infinite set) is refused.
  static std::optional<CpuSet> parseHwloc(std::string_view text);
  // "0-19,40-59" (also sysfs cpulist and nvidia-smi's CPU Affinity).
  static std::optional<CpuSet> parseList(std::string_view text);

  // The largest CPU number any parser accepts; more means a corrupt file.
  static constexpr int kMaxCpu = 1 << 16;

  void add(int cpu);
  bool contains(int cpu) const;
  bool empty() const { return cpus_.empty(); }
  int count() const { return static_cast<int>(cpus_.size()); }
  const std::vector<int>& cpus() const { return cpus_; }  // sorted, unique
  bool intersects(const CpuSet& other) const;
  bool containsAll(const CpuSet& other) const;

  std::string toList() const;      // "0-19,40-59"; "" when empty
  std::string toHexWords() const;  // NCCL's spelling; "" when empty
  bool operator==(const CpuSet& other) const { return cpus_ == other.cpus_; }

 private:
  std::vector<int> cpus_;
};

}  // namespace weft::topo
