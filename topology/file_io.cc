#include "topology/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace weft::topo {
namespace {

std::string humanBytes(uint64_t n) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? strprintf("%llu bytes", static_cast<unsigned long long>(n))
                : strprintf("%.1f %s", v, units[u]);
}

std::string_view skipSpaceAndBom(std::string_view text) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  while (!text.empty() &&
         (text[0] == ' ' || text[0] == '\t' || text[0] == '\r' || text[0] == '\n')) {
    text.remove_prefix(1);
  }
  return text;
}

// The name of the first element of an XML text, skipping the declaration, comments, DOCTYPE
// and processing instructions. Empty when there is none.
std::string rootElement(std::string_view text) {
  size_t pos = 0;
  while (true) {
    pos = text.find('<', pos);
    if (pos == std::string_view::npos || pos + 1 >= text.size()) return "";
    if (text.compare(pos, 4, "<!--") == 0) {
      size_t end = text.find("-->", pos + 4);
      if (end == std::string_view::npos) return "";
      pos = end + 3;
      continue;
    }
    char c = text[pos + 1];
    if (c == '?' || c == '!') {
      size_t end = text.find('>', pos);
      if (end == std::string_view::npos) return "";
      pos = end + 1;
      continue;
    }
    size_t end = pos + 1;
    while (end < text.size() && !strchr(" \t\r\n/>", text[end]))
      ++end;
    return std::string(text.substr(pos + 1, end - pos - 1));
  }
}

}  // namespace

Status readTopologyFile(const std::string& path, std::string* out, size_t maxBytes) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int err = errno;
    return errorf(err == ENOENT ? weftInvalidArgument : weftSystemError, "%s: cannot open: %s",
                  path.c_str(), strerror(err));
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    close(fd);
    return errorf(weftSystemError, "%s: cannot stat: %s", path.c_str(), strerror(err));
  }
  if (S_ISDIR(st.st_mode)) {
    close(fd);
    return errorf(weftInvalidArgument, "%s: is a directory, not a topology file", path.c_str());
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return errorf(weftInvalidArgument, "%s: is not a regular file", path.c_str());
  }
  if (static_cast<uint64_t>(st.st_size) > maxBytes) {
    close(fd);
    return errorf(weftInvalidArgument,
                  "%s: is %s; topology files are at most %s, so this is not one (not read)",
                  path.c_str(), humanBytes(static_cast<uint64_t>(st.st_size)).c_str(),
                  humanBytes(maxBytes).c_str());
  }
  out->clear();
  out->reserve(static_cast<size_t>(st.st_size));
  char buf[65536];
  while (true) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      return errorf(weftSystemError, "%s: read failed: %s", path.c_str(), strerror(err));
    }
    if (n == 0) break;
    if (out->size() + static_cast<size_t>(n) > maxBytes) {
      close(fd);
      return errorf(weftInvalidArgument, "%s: grew beyond %s while being read", path.c_str(),
                    humanBytes(maxBytes).c_str());
    }
    out->append(buf, static_cast<size_t>(n));
  }
  close(fd);
  if (out->empty()) return errorf(weftInvalidArgument, "%s: is empty", path.c_str());
  return okStatus();
}

FileFormat detectFormat(std::string_view text, std::string* why) {
  if (text.find('\0') != std::string_view::npos) {
    *why = "contains binary data (NUL bytes): not XML and not an nvidia-smi topo -m matrix";
    return FileFormat::kUnknown;
  }
  std::string_view body = skipSpaceAndBom(text);
  if (!body.empty() && body[0] == '<') {
    std::string root = rootElement(body);
    if (root == "system") return FileFormat::kNcclXml;
    if (root == "topology" || root == "root") return FileFormat::kHwlocXml;
    if (root == "graphs" || root == "graph") {
      *why = "is an NCCL graph file (root element <" + root +
             ">: the rings NCCL chose), not a topology; use an NCCL topology dump "
             "(NCCL_TOPO_DUMP_FILE)";
    } else if (root.empty()) {
      *why = "is not well-formed XML: no root element";
    } else {
      *why = "has the wrong root element <" + root +
             ">: expected <system> (NCCL topology XML) or <topology> (hwloc XML)";
    }
    return FileFormat::kUnknown;
  }
  // nvidia-smi topo -m: a header line naming GPU0 and a row starting with GPU0.
  bool header = false, row = false;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    std::string_view line = text.substr(pos, end == std::string_view::npos ? end : end - pos);
    std::string_view trimmed = skipSpaceAndBom(line);
    if (trimmed.substr(0, 4) == "GPU0" && line.size() > 4) {
      if (line[0] == ' ' || line[0] == '\t') {
        header = true;
      } else if (header) {
        row = true;
        break;
      } else {
        header = true;  // a header without leading space
      }
    }
    if (end == std::string_view::npos) break;
    pos = end + 1;
  }
  if (header && row) return FileFormat::kNvsmiMatrix;
  *why = "is neither XML (NCCL or hwloc topology) nor an nvidia-smi topo -m matrix";
  return FileFormat::kUnknown;
}

const char* toString(FileFormat format) {
  switch (format) {
    case FileFormat::kNcclXml:
      return "NCCL topology XML";
    case FileFormat::kHwlocXml:
      return "hwloc XML";
    case FileFormat::kNvsmiMatrix:
      return "nvidia-smi topo -m matrix";
    case FileFormat::kUnknown:
      return "unknown";
  }
  return "?";
}

}  // namespace weft::topo
