#include "topology/cpuset.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>

#include "src/base/text.h"

namespace weft::topo {
namespace {

std::optional<uint32_t> hexWord(std::string_view w) {
  if (w.size() >= 2 && w[0] == '0' && (w[1] == 'x' || w[1] == 'X')) w.remove_prefix(2);
  if (w.empty()) return 0u;
  if (w.size() > 8) return std::nullopt;
  uint32_t v = 0;
  for (char c : w) {
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      d = c - 'A' + 10;
    } else {
      return std::nullopt;
    }
    v = v * 16 + static_cast<uint32_t>(d);
  }
  return v;
}

std::optional<CpuSet> fromWords(const std::vector<std::string_view>& words) {
  if (words.size() * 32 > static_cast<size_t>(CpuSet::kMaxCpu)) return std::nullopt;
  CpuSet set;
  std::vector<int> found;
  for (size_t i = 0; i < words.size(); ++i) {
    auto v = hexWord(words[words.size() - 1 - i]);
    if (!v) return std::nullopt;
    for (int b = 0; b < 32; ++b) {
      if (*v & (1u << b)) found.push_back(static_cast<int>(i * 32) + b);
    }
  }
  for (int c : found)
    set.add(c);
  return set;
}

std::optional<int> parseNumber(std::string_view s) {
  s = trim(s);
  if (s.empty() || s.size() > 6) return std::nullopt;
  int v = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v > CpuSet::kMaxCpu) return std::nullopt;
  return v;
}

}  // namespace

std::optional<CpuSet> CpuSet::parseHexWords(std::string_view text) {
  text = trim(text);
  if (text.empty()) return std::nullopt;
  return fromWords(split(text, ','));
}

std::optional<CpuSet> CpuSet::parseHwloc(std::string_view text) {
  text = trim(text);
  if (text.empty()) return std::nullopt;
  if (text.substr(0, 4) == "0xf...f" || text.find("...") != std::string_view::npos) {
    return std::nullopt;
  }
  return fromWords(split(text, ','));
}

std::optional<CpuSet> CpuSet::parseList(std::string_view text) {
  text = trim(text);
  CpuSet set;
  if (text.empty()) return std::nullopt;
  for (std::string_view part : split(text, ',')) {
    part = trim(part);
    if (part.empty()) return std::nullopt;
    size_t dash = part.find('-');
    auto lo = parseNumber(part.substr(0, dash));
    auto hi = dash == std::string_view::npos ? lo : parseNumber(part.substr(dash + 1));
    if (!lo || !hi || *hi < *lo) return std::nullopt;
    for (int c = *lo; c <= *hi; ++c)
      set.add(c);
  }
  return set;
}

void CpuSet::add(int cpu) {
  auto it = std::lower_bound(cpus_.begin(), cpus_.end(), cpu);
  if (it == cpus_.end() || *it != cpu) cpus_.insert(it, cpu);
}

bool CpuSet::contains(int cpu) const {
  return std::binary_search(cpus_.begin(), cpus_.end(), cpu);
}

bool CpuSet::intersects(const CpuSet& other) const {
  for (int c : other.cpus_) {
    if (contains(c)) return true;
  }
  return false;
}

bool CpuSet::containsAll(const CpuSet& other) const {
  for (int c : other.cpus_) {
    if (!contains(c)) return false;
  }
  return true;
}

std::string CpuSet::toList() const {
  std::string out;
  size_t i = 0;
  while (i < cpus_.size()) {
    size_t j = i;
    while (j + 1 < cpus_.size() && cpus_[j + 1] == cpus_[j] + 1)
      ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus_[i]);
    if (j > i) out += "-" + std::to_string(cpus_[j]);
    i = j + 1;
  }
  return out;
}

std::string CpuSet::toHexWords() const {
  if (cpus_.empty()) return "";
  int words = cpus_.back() / 32 + 1;
  std::vector<uint32_t> w(static_cast<size_t>(words), 0);
  for (int c : cpus_)
    w[static_cast<size_t>(c / 32)] |= 1u << (c % 32);
  std::string out;
  char buf[16];
  for (int i = words - 1; i >= 0; --i) {
    snprintf(buf, sizeof(buf), "%08x", w[static_cast<size_t>(i)]);
    if (!out.empty()) out += ',';
    out += buf;
  }
  return out;
}

}  // namespace weft::topo
