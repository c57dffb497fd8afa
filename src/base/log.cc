#include "src/base/log.h"

#include <strings.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "src/base/env.h"
#include "src/base/text.h"

namespace weft {
namespace {

thread_local int tRank = -1;
thread_local bool tQuietColl = false;

struct Logger {
  LogLevel level = LogLevel::kNone;
  uint32_t subsys = kAllSubsys;
  FILE* out = stderr;
  char host[64] = {};
  std::mutex mutex;

  Logger() {
    const EnvConfig& c = env();
    const std::string& l = c.debugLevel;
    if (strcasecmp(l.c_str(), "VERSION") == 0) level = LogLevel::kVersion;
    if (strcasecmp(l.c_str(), "WARN") == 0) level = LogLevel::kWarn;
    if (strcasecmp(l.c_str(), "INFO") == 0) level = LogLevel::kInfo;
    if (strcasecmp(l.c_str(), "TRACE") == 0) level = LogLevel::kTrace;
    std::string unknown;
    if (!c.debugSubsys.empty()) subsys = parseLogSubsys(c.debugSubsys, &unknown).value_or(subsys);
    if (!c.debugFile.empty()) openFile(c.debugFile);
    gethostname(host, sizeof(host) - 1);
    if (char* dot = strchr(host, '.')) *dot = '\0';
  }

  void openFile(const std::string& pattern) {
    const std::string path = expandFilePattern(pattern);
    if (FILE* f = fopen(path.c_str(), "a")) {
      out = f;
    } else {  // said whatever the level: the user asked for a file and gets stderr
      fprintf(stderr, "weft: WEFT_DEBUG_FILE=%s: cannot open %s (%s); logging to stderr\n",
              pattern.c_str(), path.c_str(), strerror(errno));
    }
  }
};

const struct {
  const char* name;
  uint32_t bit;
} kSubsysNames[] = {{"INIT", kInit},           {"COLL", kColl},    {"NET", kNet}, {"SHM", kShm},
                    {"BOOTSTRAP", kBootstrap}, {"ENV", kEnv},      {"P2P", kP2p}, {"ALLOC", kAlloc},
                    {"TOPO", kTopo},           {"ALL", kAllSubsys}};

Logger& logger() {
  static Logger* l = new Logger();  // never destroyed: ranks may log during exit
  return *l;
}

const char* levelName(LogLevel level) {
  switch (level) {
    case LogLevel::kWarn:
      return "WARN";
    case LogLevel::kVersion:
    case LogLevel::kInfo:
      return "INFO";
    case LogLevel::kTrace:
      return "TRACE";
    default:
      return "";
  }
}

}  // namespace

std::optional<uint32_t> parseLogSubsys(const std::string& spec, std::string* unknown) {
  const bool invert = !spec.empty() && spec[0] == '^';
  uint32_t mask = 0;
  size_t pos = invert ? 1 : 0;
  while (pos <= spec.size()) {
    size_t comma = spec.find(',', pos);
    if (comma == std::string::npos) comma = spec.size();
    const std::string word = spec.substr(pos, comma - pos);
    pos = comma + 1;
    if (word.empty()) continue;
    bool known = false;
    for (const auto& n : kSubsysNames) {
      if (strcasecmp(word.c_str(), n.name) == 0) {
        mask |= n.bit;
        known = true;
      }
    }
    if (!known) {
      *unknown = "'" + word + "'";
      return std::nullopt;
    }
  }
  return invert ? ~mask : mask;
}

std::string logSubsysNames() {
  std::string names;
  for (const auto& n : kSubsysNames)
    names += (names.empty() ? "" : ", ") + std::string(n.name);
  return names;
}

bool logEnabled(LogLevel level, uint32_t subsys) {
  const Logger& l = logger();
  if (tQuietColl && level >= LogLevel::kInfo && (subsys & ~uint32_t{kColl}) == 0) return false;
  return level <= l.level && (subsys & l.subsys) != 0;
}

void logPrint(LogLevel level, uint32_t /*subsys*/, const char* file, int line, const char* format,
              ...) {
  Logger& l = logger();
  char msg[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(msg, sizeof(msg), format, args);
  va_end(args);
  const char* base = strrchr(file, '/');
  base = base ? base + 1 : file;
  std::lock_guard<std::mutex> lock(l.mutex);
  if (level == LogLevel::kTrace) {
    fprintf(l.out, "%s:%d:%d WEFT %s %s:%d %s\n", l.host, getpid(), tRank, levelName(level), base,
            line, msg);
  } else {
    fprintf(l.out, "%s:%d:%d WEFT %s %s\n", l.host, getpid(), tRank, levelName(level), msg);
  }
  fflush(l.out);
}

void setLogRank(int rank) {
  tRank = rank;
}
int logRank() {
  return tRank;
}

QuietCollLog::QuietCollLog(bool quiet) : previous_(tQuietColl) {
  tQuietColl = quiet;
}

QuietCollLog::~QuietCollLog() {
  tQuietColl = previous_;
}

}  // namespace weft
