#include "topology/nvsmi_table.h"

#include <algorithm>
#include <cctype>

namespace weft::topo {
namespace {

constexpr size_t kMaxDevices = 512;

std::string trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return std::string(s);
}

std::vector<std::string> splitLines(std::string_view text) {
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    std::string_view line = text.substr(pos, end == std::string_view::npos ? end : end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.emplace_back(line);
    if (end == std::string_view::npos) break;
    pos = end + 1;
  }
  return lines;
}

// Fields of a line: tab-separated when it has tabs (empty fields kept), else separated by
// blanks with the multi-word headers joined back.
std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out;
  if (line.find('\t') != std::string::npos) {
    size_t pos = 0;
    while (true) {
      size_t end = line.find('\t', pos);
      out.push_back(trim(std::string_view(line).substr(
          pos, end == std::string::npos ? std::string::npos : end - pos)));
      if (end == std::string::npos) break;
      pos = end + 1;
    }
    return out;
  }
  std::vector<std::string> words;
  size_t pos = 0;
  while (pos < line.size()) {
    while (pos < line.size() && std::isspace(static_cast<unsigned char>(line[pos])))
      ++pos;
    size_t end = pos;
    while (end < line.size() && !std::isspace(static_cast<unsigned char>(line[end])))
      ++end;
    if (end > pos) words.push_back(line.substr(pos, end - pos));
    pos = end;
  }
  for (size_t i = 0; i < words.size(); ++i) {
    if (i + 1 < words.size() && (words[i] == "CPU" || words[i] == "NUMA") &&
        words[i + 1] == "Affinity") {
      out.push_back(words[i] + " Affinity");
      ++i;
    } else if (i + 2 < words.size() && words[i] == "GPU" && words[i + 1] == "NUMA" &&
               words[i + 2] == "ID") {
      out.push_back("GPU NUMA ID");
      i += 2;
    } else {
      out.push_back(words[i]);
    }
  }
  return out;
}

bool isTrailer(const std::string& s) {
  return s == "CPU Affinity" || s == "NUMA Affinity" || s == "GPU NUMA ID";
}

}  // namespace

Status parseMatrixTable(std::string_view text, const std::string& name, MatrixTable* out) {
  *out = MatrixTable();
  std::vector<std::string> lines = splitLines(text);
  size_t header = lines.size();
  for (size_t i = 0; i < lines.size(); ++i) {
    std::vector<std::string> f = fields(lines[i]);
    // The header is the first line whose first field is GPU0 (the rows come after it).
    auto first = std::find_if(f.begin(), f.end(), [](const std::string& s) { return !s.empty(); });
    if (first != f.end() && *first == "GPU0") {
      header = i;
      break;
    }
  }
  if (header == lines.size()) {
    return errorf(weftInvalidArgument, "%s: no nvidia-smi topo -m header line (GPU0 GPU1 ...)",
                  name.c_str());
  }
  std::vector<std::string> head = fields(lines[header]);
  size_t cpuCol = std::string::npos, numaCol = std::string::npos;
  std::vector<std::string> trailers;
  for (const std::string& h : head) {
    if (h.empty()) continue;
    if (isTrailer(h)) {
      if (h == "CPU Affinity") cpuCol = trailers.size();
      if (h == "NUMA Affinity") numaCol = trailers.size();
      trailers.push_back(h);
    } else if (trailers.empty()) {
      out->columns.push_back(h);
    } else {
      return errorf(weftInvalidArgument,
                    "%s: line %zu: device column %s after the affinity columns", name.c_str(),
                    header + 1, h.c_str());
    }
  }
  if (out->columns.size() > kMaxDevices) {
    return errorf(weftInvalidArgument, "%s: more than %zu devices in the header", name.c_str(),
                  kMaxDevices);
  }
  out->hasCpuAffinity = cpuCol != std::string::npos;
  out->hasNumaAffinity = numaCol != std::string::npos;
  size_t ncols = out->columns.size();
  size_t i = header + 1;
  for (; i < lines.size(); ++i) {
    std::string t = trim(lines[i]);
    if (t.empty() || t.rfind("Legend", 0) == 0 || t.rfind("NIC Legend", 0) == 0) break;
    std::vector<std::string> f = fields(lines[i]);
    while (!f.empty() && f.front().empty() && lines[i].find('\t') == std::string::npos) {
      f.erase(f.begin());
    }
    if (f.size() < ncols + 1) {
      return errorf(weftInvalidArgument,
                    "%s: line %zu: row %s has %zu cells; the header has %zu "
                    "devices",
                    name.c_str(), i + 1, f.empty() ? "" : f[0].c_str(),
                    f.empty() ? 0 : f.size() - 1, ncols);
    }
    out->rows.push_back(f[0]);
    out->cells.emplace_back(f.begin() + 1, f.begin() + 1 + static_cast<long>(ncols));
    std::vector<std::string> rest(f.begin() + 1 + static_cast<long>(ncols), f.end());
    out->cpuAffinity.push_back(cpuCol < rest.size() ? rest[cpuCol] : "");
    out->numaAffinity.push_back(numaCol < rest.size() ? rest[numaCol] : "");
    if (out->rows.size() > kMaxDevices) {
      return errorf(weftInvalidArgument, "%s: more than %zu rows", name.c_str(), kMaxDevices);
    }
  }
  // "NIC Legend:" then "  NIC0: mlx5_0" lines.
  for (; i < lines.size(); ++i) {
    if (trim(lines[i]).rfind("NIC Legend", 0) != 0) continue;
    for (size_t j = i + 1; j < lines.size(); ++j) {
      std::string t = trim(lines[j]);
      if (t.empty()) continue;
      size_t colon = t.find(':');
      if (colon == std::string::npos) break;
      std::string from = trim(std::string_view(t).substr(0, colon));
      std::string to = trim(std::string_view(t).substr(colon + 1));
      if (to.empty()) continue;
      for (std::string& c : out->columns) {
        if (c == from) c = to;
      }
      for (std::string& r : out->rows) {
        if (r == from) r = to;
      }
    }
    break;
  }
  if (out->rows.empty()) {
    return errorf(weftInvalidArgument, "%s: the matrix has a header but no rows", name.c_str());
  }
  return okStatus();
}

}  // namespace weft::topo
