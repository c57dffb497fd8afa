#include "src/enqueue/trace_dump.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "src/base/env.h"
#include "src/base/log.h"
#include "src/base/text.h"
#include "src/comm/communicator.h"
#include "src/comm/registry.h"
#include "src/enqueue/record.h"
#include "weft/weft.h"

namespace weft {
namespace {

double micros(int64_t ns) {
  return static_cast<double>(ns) / 1000.0;
}

nlohmann::json recordJson(const CallRecord& r) {
  nlohmann::json j;
  j["id"] = r.id;
  j["kind"] = recordedCallKind(r.call);
  j["call"] = describeRecordedCall(r.call);
  if (r.call.collective >= 0) j["collective"] = r.call.collective;
  j["state"] = callStateName(r.state);
  if (r.how != 0) j["how"] = describeRecordedHow(r.how);
  if (r.state == CallState::kFailed) {
    j["result"] = weftGetErrorString(static_cast<weftResult_t>(r.result));
  }
  j["enqueued_us"] = micros(r.enqueuedNs);
  if (r.startedNs != 0) j["started_us"] = micros(r.startedNs);
  if (r.endedNs != 0) j["ended_us"] = micros(r.endedNs);
  return j;
}

std::string hostName() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  return host;
}

// SIGUSR1: the handler writes a byte to a pipe, and a thread that reads it does the dumping,
// which a signal handler may not.
int gSignalPipe[2] = {-1, -1};

void onTraceSignal(int /*signal*/) {
  const int saved = errno;
  const char byte = 1;
  ssize_t ignored = write(gSignalPipe[1], &byte, 1);
  (void)ignored;
  errno = saved;
}

void dumpOnSignals() {
  for (;;) {
    char byte = 0;
    const ssize_t n = read(gSignalPipe[0], &byte, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    forEachLiveComm([](Communicator& comm) {
      if (comm.state() == Communicator::State::kInitializing) return;
      std::string path = dumpTrace(comm, "signal", comm.usable());
      if (!path.empty())
        WEFT_WARN(kInit, "%s: trace written to %s", comm.describe().c_str(), path.c_str());
    });
  }
}

}  // namespace

std::string traceDumpPath(const Communicator& comm) {
  const std::string& prefix = env().traceDump;
  if (prefix.empty()) return "";
  return expandFilePattern(prefix) +
         strprintf("%016llx.r%d.json", static_cast<unsigned long long>(comm.tag()), comm.rank());
}

std::string traceJson(Communicator& comm, const std::string& reason, const Status& error) {
  nlohmann::json j;
  j["weft_trace"] = 1;
  j["version"] = strprintf("%d.%d.%d", WEFT_MAJOR, WEFT_MINOR, WEFT_PATCH);
  j["comm"] = strprintf("%016llx", static_cast<unsigned long long>(comm.tag()));
  j["name"] = comm.config().name;
  j["rank"] = comm.rank();
  j["nranks"] = comm.nranks();
  j["host"] = hostName();
  j["pid"] = getpid();
  j["reason"] = reason;
  j["time_us"] = micros(std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count());
  if (!error.ok()) {
    j["error"] = error.message();
    j["result"] = weftGetErrorString(error.code());
  }
  nlohmann::json calls = nlohmann::json::array();
  for (const CallRecord& r : comm.recorder().snapshot())
    calls.push_back(recordJson(r));
  j["calls"] = std::move(calls);
  return j.dump(1);
}

std::string dumpTrace(Communicator& comm, const std::string& reason, const Status& error) {
  std::string path = traceDumpPath(comm);
  if (path.empty()) return "";
  const std::string text = traceJson(comm, reason, error);
  const std::string partial = path + ".partial";
  {
    std::ofstream out(partial, std::ios::trunc);
    out << text << '\n';
    if (!out.flush()) {
      WEFT_WARN(kInit, "%s: could not write the trace to %s (WEFT_TRACE_DUMP)",
                comm.describe().c_str(), partial.c_str());
      return "";
    }
  }
  // Renamed into place, so that a reader never sees half a dump.
  if (rename(partial.c_str(), path.c_str()) != 0) {
    WEFT_WARN(kInit, "%s: could not rename %s to %s: %s", comm.describe().c_str(), partial.c_str(),
              path.c_str(), strerror(errno));
    return "";
  }
  return path;
}

void installTraceSignal() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (env().traceDump.empty()) return;
    struct sigaction old = {};
    if (sigaction(SIGUSR1, nullptr, &old) != 0) return;
    if ((old.sa_flags & SA_SIGINFO) != 0 || old.sa_handler != SIG_DFL) {
      WEFT_WARN(kInit, "SIGUSR1 has a handler already: WEFT_TRACE_DUMP dumps on errors only");
      return;
    }
    if (pipe2(gSignalPipe, O_CLOEXEC) != 0) return;
    std::thread(dumpOnSignals).detach();
    struct sigaction action = {};
    action.sa_handler = onTraceSignal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &action, nullptr);
  });
}

}  // namespace weft
