// Logging controlled by WEFT_DEBUG (VERSION|WARN|INFO|TRACE) and WEFT_DEBUG_SUBSYS
// (INIT,COLL,NET,...).
// Lines start with host:pid:rank so output of many ranks can be merged and still read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace weft {

// kVersion prints the version banner alone (as NCCL_DEBUG=VERSION does).
enum class LogLevel : int { kNone = 0, kVersion = 1, kWarn = 2, kInfo = 3, kTrace = 4 };

enum LogSubsys : uint32_t {
  kInit = 1u << 0,
  kColl = 1u << 1,
  kNet = 1u << 2,
  kShm = 1u << 3,
  kBootstrap = 1u << 4,
  kEnv = 1u << 5,
  kP2p = 1u << 6,
  kAlloc = 1u << 7,
  kTopo = 1u << 8,
  kAllSubsys = ~0u,
};

// A WEFT_DEBUG_SUBSYS value as a mask ("INIT,COLL" selects those, "^NET" all but NET), or
// nothing when a name is unknown (then *unknown holds it).
std::optional<uint32_t> parseLogSubsys(const std::string& spec, std::string* unknown);
// The subsystem names, for messages: "INIT, COLL, ...".
std::string logSubsysNames();

bool logEnabled(LogLevel level, uint32_t subsys);
void logPrint(LogLevel level, uint32_t subsys, const char* file, int line, const char* format, ...)
    __attribute__((format(printf, 5, 6)));

// The rank shown in this thread's log lines (-1: none yet).
void setLogRank(int rank);
int logRank();

// While one lives on a thread, that thread logs no INFO or TRACE line at COLL alone: calls on
// communicators created with weftConfig_t.logCalls = 0 (a tool's own bookkeeping) run under one
// (calls grouped with a logged communicator's stay logged).
class QuietCollLog {
 public:
  explicit QuietCollLog(bool quiet);
  ~QuietCollLog();
  QuietCollLog(const QuietCollLog&) = delete;
  QuietCollLog& operator=(const QuietCollLog&) = delete;

 private:
  bool previous_;
};

}  // namespace weft

#define WEFT_LOG(level, subsys, ...)                                            \
  do {                                                                          \
    if (::weft::logEnabled(level, ::weft::subsys))                              \
      ::weft::logPrint(level, ::weft::subsys, __FILE__, __LINE__, __VA_ARGS__); \
  } while (0)
#define WEFT_WARN(subsys, ...) WEFT_LOG(::weft::LogLevel::kWarn, subsys, __VA_ARGS__)
#define WEFT_INFO(subsys, ...) WEFT_LOG(::weft::LogLevel::kInfo, subsys, __VA_ARGS__)
#define WEFT_TRACE(subsys, ...) WEFT_LOG(::weft::LogLevel::kTrace, subsys, __VA_ARGS__)
