// Windows and the one-sided calls on them (src/comm/registered_window.h). A handle is a token,
// never reused, so a stale or made-up one is an error, not a crash; registration and
// deregistration are collective even where one rank's arguments are wrong, so that its peers
// get the error too instead of waiting for it.
#include "src/api/windows.h"

#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "src/api/api_util.h"
#include "src/comm/registered_window.h"
#include "src/enqueue/group.h"

namespace weft {
namespace {

struct Entry {
  weftComm_t comm = nullptr;
  std::shared_ptr<RegisteredWindow> window;
};

// Leaked on purpose, as the communicators' registry: calls at exit still find it.
struct Windows {
  std::mutex mutex;
  uintptr_t next = 16;
  std::map<uintptr_t, Entry> byHandle;
};
Windows& windows() {
  static auto* w = new Windows();
  return *w;
}

// The window of a live handle of `comm`, kept alive for the call.
Status lookupWindow(weftWindow_t handle, weftComm_t comm, std::shared_ptr<RegisteredWindow>* out) {
  Windows& w = windows();
  std::lock_guard<std::mutex> lock(w.mutex);
  auto it = w.byHandle.find(reinterpret_cast<uintptr_t>(handle));
  if (it == w.byHandle.end()) {
    return Status(weftInvalidArgument, "not a registered window (deregistered already?)");
  }
  if (it->second.comm != comm) {
    return Status(weftInvalidArgument, "the window belongs to another communicator");
  }
  *out = it->second.window;
  return okStatus();
}

Status notInGroup() {
  if (!inGroup()) return okStatus();
  return Status(weftInvalidUsage,
                "windows' calls cannot be part of a group (weftGroupStart/weftGroupEnd)");
}

// What every rank sends the others at registration: its part, or that it failed.
struct Offer {
  RegisteredWindow::Part part;
  int32_t failed = 0;  // a weftResult_t
  int32_t reserved = 0;
};

// Every rank's verdict, the worst of them: the ranks go on, or fail, together.
Status agreeAll(weftComm_t handle, const Status& mine, const char* what) {
  int32_t code = mine.code(), worst = 0;
  if (weftAllReduce(&code, &worst, 1, weftInt32, weftMax, handle, nullptr) != weftSuccess) {
    return Status(weftRemoteError, std::string(what) + ": the ranks could not agree");
  }
  if (!mine.ok()) return mine;
  if (worst != 0)
    return Status(static_cast<weftResult_t>(worst), std::string(what) + " failed on a rank");
  return okStatus();
}

Status registerWindow(weftComm_t handle, Communicator& comm, void* buff, size_t size, int winFlags,
                      weftWindow_t* win) {
  Offer mine;
  std::memset(static_cast<void*>(&mine), 0, sizeof(mine));  // padding too: it travels
  RegisteredWindow* made = nullptr;
  Status local =
      win == nullptr || winFlags != WEFT_WIN_DEFAULT
          ? Status(weftInvalidArgument, "win is NULL or winFlags is not WEFT_WIN_DEFAULT")
          : RegisteredWindow::create(comm, buff, size, &made, &mine.part);
  std::unique_ptr<RegisteredWindow> window(made);
  mine.failed = local.code();
  std::vector<Offer> all(static_cast<size_t>(comm.nranks()));
  if (weftAllGather(&mine, all.data(), sizeof(Offer), weftUint8, handle, nullptr) != weftSuccess) {
    return Status(weftRemoteError, "the ranks' parts did not arrive");
  }
  if (!local.ok()) return local;
  for (size_t r = 0; r < all.size(); ++r) {
    if (all[r].failed != 0) {
      return errorf(static_cast<weftResult_t>(all[r].failed),
                    "rank %zu could not register its part of the window", r);
    }
  }
  std::vector<RegisteredWindow::Part> parts;
  parts.reserve(all.size());
  for (const Offer& o : all)
    parts.push_back(o.part);
  WEFT_RETURN_IF_ERROR(agreeAll(handle, window->open(parts), "mapping the window"));
  Windows& w = windows();
  std::lock_guard<std::mutex> lock(w.mutex);
  const uintptr_t token = w.next;
  w.next += 16;
  w.byHandle.emplace(token, Entry{handle, std::shared_ptr<RegisteredWindow>(std::move(window))});
  *win = reinterpret_cast<weftWindow_t>(token);  // NOLINT(performance-no-int-to-ptr): a token
  return okStatus();
}

}  // namespace

void dropWindowsOf(const Communicator* comm) {
  Windows& w = windows();
  std::lock_guard<std::mutex> lock(w.mutex);
  for (auto it = w.byHandle.begin(); it != w.byHandle.end();) {
    it = &it->second.window->comm() == comm ? w.byHandle.erase(it) : std::next(it);
  }
}

}  // namespace weft

using weft::Communicator;
using weft::Status;

extern "C" {

weftResult_t weftCommWindowRegister(weftComm_t comm, void* buff, size_t size, weftWindow_t* win,
                                    int winFlags) {
  Communicator* c = nullptr;
  Status s = weft::lookupComm(comm, &c);
  if (s.ok()) s = weft::notInGroup();
  if (!s.ok()) return weft::report(s.withContext("weftCommWindowRegister"), c);
  if (win != nullptr) *win = nullptr;
  return weft::report(weft::registerWindow(comm, *c, buff, size, winFlags, win)
                          .withContext("weftCommWindowRegister"),
                      c);
}

weftResult_t weftCommWindowDeregister(weftComm_t comm, weftWindow_t win) {
  Communicator* c = nullptr;
  Status s = weft::lookupComm(comm, &c);
  if (s.ok()) s = weft::notInGroup();
  if (!s.ok()) return weft::report(s.withContext("weftCommWindowDeregister"), c);
  std::shared_ptr<weft::RegisteredWindow> w;
  s = weft::lookupWindow(win, comm, &w);
  // Every rank, whatever its handle: once all have reached this, no peer puts into this rank's
  // part any more; a rank with a bad handle fails every rank's call, and nobody's window goes.
  s = weft::agreeAll(comm, s, "deregistering the window");
  if (s.ok()) {
    weft::Windows& all = weft::windows();
    {
      std::lock_guard<std::mutex> lock(all.mutex);
      all.byHandle.erase(reinterpret_cast<uintptr_t>(win));
    }
    s = w->finishRemotePuts();
  }
  return weft::report(s.withContext("weftCommWindowDeregister"), c);
}

weftResult_t weftPutSignal(const void* localbuff, size_t count, weftDataType_t datatype, int peer,
                           weftWindow_t peerWin, size_t peerWinOffset, int sigIdx, int ctx,
                           unsigned int flags, weftComm_t comm, weftStream_t stream) {
  Communicator* c = nullptr;
  Status s = weft::lookupComm(comm, &c);
  std::shared_ptr<weft::RegisteredWindow> w;
  if (s.ok()) s = weft::notInGroup();
  if (s.ok() && (ctx != 0 || flags != 0))
    s = Status(weftInvalidArgument, "ctx and flags must be 0");
  if (s.ok()) s = weft::lookupWindow(peerWin, comm, &w);
  size_t bytes = 0;
  if (s.ok()) s = w->checkPut(localbuff, count, datatype, peer, peerWinOffset, sigIdx, &bytes);
  if (s.ok()) {
    s = weft::submitTask(stream, c, [w, localbuff, bytes, peer, peerWinOffset, sigIdx] {
      return w->putInTurn(localbuff, bytes, peer, peerWinOffset, sigIdx);
    });
  }
  return weft::report(s.withContext("weftPutSignal"), c);
}

weftResult_t weftWaitSignal(int nDesc, const weftWaitSignalDesc_t* signalDescs, weftWindow_t win,
                            weftComm_t comm, weftStream_t stream) {
  Communicator* c = nullptr;
  Status s = weft::lookupComm(comm, &c);
  std::shared_ptr<weft::RegisteredWindow> w;
  if (s.ok()) s = weft::notInGroup();
  if (s.ok()) s = weft::lookupWindow(win, comm, &w);
  if (s.ok() && (nDesc < 0 || (nDesc > 0 && signalDescs == nullptr))) {
    s = Status(weftInvalidArgument, "nDesc is negative, or signalDescs is NULL");
  }
  std::vector<weft::RegisteredWindow::SignalWait> waits;
  waits.reserve(nDesc > 0 ? static_cast<size_t>(nDesc) : 0);
  for (int i = 0; s.ok() && i < nDesc; ++i) {
    const weftWaitSignalDesc_t& d = signalDescs[i];
    if (d.ctx != 0) s = Status(weftInvalidArgument, "ctx must be 0");
    waits.push_back({d.peer, d.sigIdx, d.opCnt});
  }
  if (s.ok()) s = w->checkWaits(waits);
  if (s.ok()) {
    s = weft::submitTask(stream, c, [w, waits = std::move(waits)] { return w->waitInTurn(waits); });
  }
  return weft::report(s.withContext("weftWaitSignal"), c);
}

}  // extern "C"
