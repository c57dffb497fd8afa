// weftGetErrorString, weftGetLastError, weftGetVersion, and the error plumbing they share.
#include <cstring>
#include <string>
#include <unordered_map>

#include "src/api/api_util.h"
#include "src/base/log.h"
#include "src/comm/registry.h"
#include "src/enqueue/group.h"

namespace weft {
namespace {

thread_local std::string tLastError;
// What weftGetLastError's pointers show, one string per communicator asked about, so two calls
// in one expression do not overwrite each other.
thread_local std::unordered_map<weftComm_t, std::string> tShown;

}  // namespace

weftResult_t report(const Status& status, Communicator* comm) {
  if (status.ok()) return weftSuccess;
  tLastError = status.message();
  if (comm != nullptr) comm->setLastError(status.message());
  noteGroupError(status);
  WEFT_INFO(kInit, "call failed: %s", status.message().c_str());
  return status.code();
}

Status lookupCommAnyState(weftComm_t handle, Communicator** out) {
  *out = nullptr;
  if (handle == nullptr) return Status(weftInvalidArgument, "comm is NULL");
  Communicator* comm = liveComm(handle);
  if (comm == nullptr) {
    return Status(weftInvalidArgument,
                  "comm is not a live communicator (destroyed, aborted or never created)");
  }
  *out = comm;
  return okStatus();
}

Status lookupComm(weftComm_t handle, Communicator** out) {
  WEFT_RETURN_IF_ERROR(lookupCommAnyState(handle, out));
  return (*out)->waitUntilReady();
}

}  // namespace weft

using weft::Communicator;

extern "C" {

weftResult_t weftGetVersion(int* version) {
  if (version == nullptr) {
    return weft::report(weft::Status(weftInvalidArgument, "weftGetVersion: version is NULL"));
  }
  *version = WEFT_VERSION_CODE;
  return weftSuccess;
}

const char* weftGetErrorString(weftResult_t result) {
  switch (result) {
    case weftSuccess:
      return "no error";
    case weftUnhandledCudaError:
      return "unhandled CUDA error";
    case weftSystemError:
      return "unhandled system error (a system call failed; see weftGetLastError)";
    case weftInternalError:
      return "internal error (a Weft bug or corrupt data from a peer)";
    case weftInvalidArgument:
      return "invalid argument";
    case weftInvalidUsage:
      return "invalid usage (of a call, a setting or the launch environment)";
    case weftRemoteError:
      return "remote process exited or there was a network error";
    case weftInProgress:
      return "operation in progress";
    case weftTimeout:
      return "timed out (WEFT_TIMEOUT)";
    default:
      return "unknown result code";
  }
}

const char* weftGetLastError(weftComm_t comm) {
  Communicator* c = nullptr;
  const bool live = comm != nullptr && weft::lookupCommAnyState(comm, &c).ok();
  // Handles are never reused: forget those asked about long ago rather than grow without end.
  if (weft::tShown.size() > 256) weft::tShown.clear();
  std::string& shown = weft::tShown[live ? comm : nullptr];
  shown = live ? c->lastError() : weft::tLastError;
  return shown.c_str();
}

}  // extern "C"
