#include "src/base/env.h"

#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <limits>
#include <vector>

#include "src/base/log.h"
#include "src/base/text.h"

namespace weft {
namespace {

std::optional<int64_t> parseInt(const std::string& text) {
  errno = 0;
  char* end = nullptr;
  long long v = strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || *end != '\0') return std::nullopt;
  return static_cast<int64_t>(v);
}

std::optional<double> parseDouble(const std::string& text) {
  errno = 0;
  char* end = nullptr;
  double v = strtod(text.c_str(), &end);
  if (errno != 0 || end == text.c_str() || *end != '\0') return std::nullopt;
  return v;
}

// Reads the variables one by one: a valid value goes into the config, a bad one into
// report->problems (naming what is allowed), and every one set into report->set.
struct Parser {
  EnvReport* report;

  std::optional<std::string> read(const char* name) {
    auto v = getEnv(name);
    if (v) report->set.emplace_back(name, *v);
    return v;
  }
  void problem(const char* name, const std::string& value, const std::string& allowed) {
    report->problems.push_back(std::string(name) + "=" + value + " " + allowed);
  }

  void str(const char* name, std::string* out) {
    if (auto v = read(name)) *out = *v;
  }
  // One of `allowed`, in any case when `anyCase`.
  void choice(const char* name, std::initializer_list<const char*> allowed, std::string* out,
              bool anyCase = false) {
    auto v = read(name);
    if (!v) return;
    std::string list;
    for (const char* a : allowed) {
      if (anyCase ? strcasecmp(v->c_str(), a) == 0 : *v == a) {
        *out = *v;
        return;
      }
      list += list.empty() ? a : std::string(", ") + a;
    }
    problem(name, *v, "is not one of " + list);
  }
  void flag(const char* name, bool* out) {
    std::string text = *out ? "1" : "0";
    choice(name, {"0", "1"}, &text);
    *out = text == "1";
  }
  template <typename T>
  void integer(const char* name, int64_t minimum, T* out,
               int64_t maximum = std::numeric_limits<int32_t>::max()) {
    auto v = read(name);
    if (!v) return;
    auto n = parseInt(*v);
    if (!n || *n < minimum || *n > maximum) {
      problem(name, *v,
              "is not an integer " +
                  (maximum == std::numeric_limits<int32_t>::max()
                       ? "of at least " + std::to_string(minimum)
                       : "from " + std::to_string(minimum) + " to " + std::to_string(maximum)));
      return;
    }
    *out = static_cast<T>(*n);
  }
  // Whether the variable was set to a valid size (then *out holds it).
  bool bytes(const char* name, size_t minimum, size_t* out) {
    auto v = read(name);
    if (!v) return false;
    auto n = parseBytes(*v);
    if (!n || *n < minimum) {
      problem(name, *v,
              "is not a byte size (a number with an optional K, M or G) of at least " +
                  std::to_string(minimum));
      return false;
    }
    *out = *n;
    return true;
  }
  void seconds(const char* name, int64_t* outMs) {
    auto v = read(name);
    if (!v) return;
    auto s = parseDouble(*v);
    if (!s || *s < 0) {
      problem(name, *v, "is not a number of seconds (0 waits forever)");
      return;
    }
    *outMs = static_cast<int64_t>(*s * 1000.0);
  }
  // A file name pattern (%h, %p) whose directory must exist and be writable: found out at init,
  // not when the first line or dump is lost.
  void filePattern(const char* name, std::string* out) {
    auto v = read(name);
    if (!v) return;
    const std::string path = expandFilePattern(*v);
    const size_t slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
    struct stat st = {};
    if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || access(dir.c_str(), W_OK) != 0) {
      problem(name, *v,
              "names a file in " + dir +
                  ", which is not a directory this process may "
                  "write to");
      return;
    }
    *out = *v;
  }
  // 0, or a scheduler slice the kernel takes (100 us to 100 ms).
  void slice(const char* name, int64_t* outUs) {
    auto v = read(name);
    if (!v) return;
    auto n = parseInt(*v);
    if (!n || (*n != 0 && (*n < 100 || *n > 100'000))) {
      problem(name, *v, "is not 0 or a number of microseconds from 100 to 100000");
      return;
    }
    *outUs = *n;
  }
  void logSubsystems(const char* name, std::string* out) {
    auto v = read(name);
    if (!v) return;
    std::string unknown;
    if (!parseLogSubsys(*v, &unknown)) {
      problem(name, *v, "names " + unknown + ", which is not one of " + logSubsysNames());
      return;
    }
    *out = *v;
  }
};

}  // namespace

EnvConfig parseEnv(EnvReport* report) {
  *report = EnvReport();
  EnvConfig c;
  Parser p{report};
  p.choice("WEFT_DEBUG", {"VERSION", "WARN", "INFO", "TRACE"}, &c.debugLevel, true);
  p.logSubsystems("WEFT_DEBUG_SUBSYS", &c.debugSubsys);
  p.filePattern("WEFT_DEBUG_FILE", &c.debugFile);
  p.seconds("WEFT_TIMEOUT", &c.timeoutMs);
  p.choice("WEFT_WAIT", {"auto", "spin", "yield", "block"}, &c.wait);
  p.slice("WEFT_WAIT_SLICE_US", &c.waitSliceUs);
  p.integer("WEFT_TRACE_BUFFER", 0, &c.traceBuffer);
  p.filePattern("WEFT_TRACE_DUMP", &c.traceDump);
  p.choice("WEFT_TRANSPORT", {"auto", "shm", "tcp"}, &c.transport);
  p.choice("WEFT_NET", {"auto", "tcp", "ucx"}, &c.net);
  p.str("WEFT_SOCKET_IFNAME", &c.socketIfname);
  p.choice("WEFT_SOCKET_FAMILY", {"AF_INET", "AF_INET6"}, &c.socketFamily);
  p.integer("WEFT_NSOCKS_PERPEER", 1, &c.nSocketsPerPeer, 16);
  p.bytes("WEFT_SOCKET_PACE_BYTES", 0, &c.socketPaceBytes);
  p.bytes("WEFT_SHM_RING_BYTES", 4096, &c.shmRingBytes);
  p.bytes("WEFT_SHM_SLOT_BYTES", 4096, &c.shmSlotBytes);
  p.bytes("WEFT_SHM_STAGING_BYTES", 0, &c.shmStagingBytes);
  p.bytes("WEFT_DIRECT_BYTES", 0, &c.directBytes);
  // Set (and valid), it holds for oversubscribed ranks too.
  if (p.bytes("WEFT_SHM_STREAM_BYTES", 0, &c.shmStreamBytes)) {
    c.shmStreamBytesOversubscribed = c.shmStreamBytes;
  }
  p.bytes("WEFT_SHM_SINGLE_COPY_BYTES", 0, &c.shmSingleCopyBytes);
  p.bytes("WEFT_SHM_SINGLE_COPY_MAX_BYTES", 0, &c.shmSingleCopyMaxBytes);
  p.str("WEFT_SHM_SINGLE_COPY_COLLS", &c.shmSingleCopyColls);
  p.choice("WEFT_SHM_STAGE_STORES", {"auto", "cached", "streamed"}, &c.shmStageStores);
  p.integer("WEFT_SHM_SINGLE_COPY_MAX_RANKS", 0, &c.shmSingleCopyMaxRanks);
  p.choice("WEFT_SHM_SINGLE_COPY", {"never", "auto", "always"}, &c.shmSingleCopy);
  p.str("WEFT_HOSTID", &c.hostId);
  p.str("WEFT_TOPO_FILE", &c.topoFile);
  p.str("WEFT_ALGO", &c.algo);
  p.choice("WEFT_HIERARCHY", {"auto", "on", "off"}, &c.hierarchy);
  p.flag("WEFT_CALIBRATE", &c.calibrate);
  p.bytes("WEFT_CHUNK_BYTES", 64, &c.chunkBytes);
  return c;
}

std::optional<std::string> getEnv(const char* name) {
  const char* v = getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

std::optional<size_t> parseBytes(const std::string& text) {
  if (text.empty()) return std::nullopt;
  size_t mult = 1;
  std::string digits = text;
  switch (text.back()) {
    case 'k':
    case 'K':
      mult = size_t{1} << 10;
      break;
    case 'm':
    case 'M':
      mult = size_t{1} << 20;
      break;
    case 'g':
    case 'G':
      mult = size_t{1} << 30;
      break;
    default:
      break;
  }
  if (mult != 1) digits.pop_back();
  auto n = parseInt(digits);
  if (!n || *n < 0) return std::nullopt;
  return static_cast<size_t>(*n) * mult;
}

namespace {
EnvReport gReport;
}  // namespace

const EnvConfig& env() {
  static const EnvConfig config = parseEnv(&gReport);
  return config;
}

const EnvReport& envReport() {
  env();
  return gReport;
}

Status checkEnv() {
  const EnvReport& report = envReport();
  if (report.problems.empty()) return okStatus();
  std::string text;
  for (const std::string& p : report.problems)
    text += (text.empty() ? "" : "; ") + p;
  return Status(weftInvalidArgument, text);
}

}  // namespace weft
