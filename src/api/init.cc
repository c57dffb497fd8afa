// Communicator setup and teardown: unique ids, init (by id, all in one process, from the
// launcher's environment), split, finalize, destroy, abort and queries.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "src/api/api_util.h"
#include "src/api/windows.h"
#include "src/base/env.h"
#include "src/base/log.h"
#include "src/bootstrap/launch_env.h"
#include "src/bootstrap/root.h"
#include "src/bootstrap/unique_id.h"
#include "src/comm/config.h"
#include "src/comm/registry.h"
#include "src/comm/version_banner.h"
#include "src/enqueue/group.h"
#include "src/enqueue/trace_dump.h"

namespace weft {
namespace {

// Rank 0 of a launch runs the root on the launch's port: on that address only where it was
// written as a loopback one (127.0.0.1 keeps it off the network), else on every interface.
Status startLaunchRoot(const UniqueIdData& id, int nranks, int64_t timeoutMs) {
  SockAddr address = id.root.toSockAddr();
  if (!id.rootAtGivenAddress) {
    SockAddr wildcard;
    wildcard.length = address.length;
    wildcard.storage.ss_family = static_cast<sa_family_t>(address.family());
    wildcard.setPort(address.port());
    address = wildcard;
  }
  SockAddr bound;
  return startRoot(address, id.secret, id.commTag, timeoutMs, nranks, &bound)
      .withContext("starting the rendezvous root on " + address.toString());
}

Status initRank(weftComm_t* out, int nranks, const UniqueIdData& id, int rank,
                const weftConfig_t* userConfig, bool* inProgress) {
  *inProgress = false;
  if (nranks < 1) return errorf(weftInvalidArgument, "nranks must be at least 1, not %d", nranks);
  if (rank < 0 || rank >= nranks) {
    return errorf(weftInvalidArgument, "rank %d is out of range for %d ranks", rank, nranks);
  }
  CommConfig config;
  WEFT_RETURN_IF_ERROR(resolveConfig(userConfig, &config));
  if (id.rootStartedByRank0 && rank == 0) {
    WEFT_RETURN_IF_ERROR(startLaunchRoot(id, nranks, config.timeoutMs));
  }
  auto comm = std::make_unique<Communicator>(rank, nranks, config);
  installTraceSignal();
  if (inGroup() || !config.blocking) {
    comm->connectInBackground(id);
    if (inGroup()) deferInit(comm.get());
    *inProgress = !inGroup();
  } else {
    WEFT_RETURN_IF_ERROR(comm->connect(id));
  }
  *out = registerComm(comm.release());
  return okStatus();
}

weftResult_t initRankApi(weftComm_t* comm, int nranks, const weftUniqueId& commId, int rank,
                         const weftConfig_t* config) {
  if (comm == nullptr) return report(Status(weftInvalidArgument, "comm is NULL"));
  *comm = nullptr;
  UniqueIdData id;
  Status s = decodeUniqueId(commId, &id);
  weftComm_t handle = nullptr;
  bool inProgress = false;
  if (s.ok()) s = initRank(&handle, nranks, id, rank, config, &inProgress);
  if (!s.ok()) return report(s);
  *comm = handle;
  return inProgress ? weftInProgress : weftSuccess;
}

// Waits for operations already queued, then frees the communicator. A communicator whose
// operations never drain is leaked rather than freed under them.
Status release(Communicator* comm) {
  unregisterComm(comm);
  if (comm->state() == Communicator::State::kInitializing) {
    Status ignored = comm->waitUntilReady();
    (void)ignored;
  }
  Status drained = comm->drain();
  if (drained.code() == weftTimeout) {
    WEFT_WARN(kInit, "%s: operations still running at destroy; leaking the communicator",
              comm->describe().c_str());
    return drained;
  }
  dropWindowsOf(comm);
  delete comm;
  return okStatus();
}

struct SplitPeer {
  int color;
  int key;
  int rank;
};

// Each colour's lowest (key, rank) member makes the new communicator's id; all ranks gather
// the ids through the parent's bootstrap and keep their colour's.
Status splitIds(Communicator& parent, int color, int key, int* newRank, int* newSize,
                UniqueIdData* id) {
  Blob mine(sizeof(SplitPeer));
  SplitPeer me{color, key, parent.rank()};
  memcpy(mine.data(), &me, sizeof(me));
  std::vector<Blob> all;
  WEFT_RETURN_IF_ERROR(parent.bootstrap().allGather(mine, &all));
  std::vector<SplitPeer> group;
  for (const Blob& b : all) {
    if (b.size() != sizeof(SplitPeer)) return Status(weftInternalError, "bad split message");
    SplitPeer p;
    memcpy(&p, b.data(), sizeof(p));
    if (p.color == color && color != WEFT_SPLIT_NOCOLOR) group.push_back(p);
  }
  std::sort(group.begin(), group.end(), [](const SplitPeer& a, const SplitPeer& b) {
    return a.key != b.key ? a.key < b.key : a.rank < b.rank;
  });
  *newSize = static_cast<int>(group.size());
  *newRank = -1;
  for (size_t i = 0; i < group.size(); ++i) {
    if (group[i].rank == parent.rank()) *newRank = static_cast<int>(i);
  }
  Blob myId;
  if (*newRank == 0) {
    UniqueIdData fresh;
    WEFT_RETURN_IF_ERROR(newRendezvous(parent.config().timeoutMs, &fresh));
    weftUniqueId encoded;
    encodeUniqueId(fresh, &encoded);
    myId.assign(encoded.internal, encoded.internal + sizeof(encoded.internal));
  }
  WEFT_RETURN_IF_ERROR(parent.bootstrap().allGather(myId, &all));
  if (*newRank < 0) return okStatus();
  const Blob& leaderId = all[group[0].rank];
  weftUniqueId encoded;
  if (leaderId.size() != sizeof(encoded.internal)) return Status(weftInternalError, "bad split id");
  memcpy(encoded.internal, leaderId.data(), sizeof(encoded.internal));
  return decodeUniqueId(encoded, id);
}

}  // namespace
}  // namespace weft

using weft::Communicator;
using weft::report;
using weft::Status;

extern "C" {

weftResult_t weftGetUniqueId(weftUniqueId* uniqueId) {
  if (uniqueId == nullptr) return report(Status(weftInvalidArgument, "uniqueId is NULL"));
  weft::logVersionBannerOnce();
  weft::UniqueIdData id;
  Status s = weft::checkEnv();
  if (!s.ok()) return report(s);
  if (auto commId = weft::getEnv("WEFT_COMM_ID")) {
    // As NCCL_COMM_ID: the root runs at that address, started by rank 0 during init.
    s = weft::setLaunchRoot(*commId, &id);
    if (s.ok()) s = weft::randomBytes(id.secret.data(), id.secret.size());
    if (s.ok()) s = weft::randomBytes(&id.commTag, sizeof(id.commTag));
  } else {
    s = weft::newRendezvous(weft::env().timeoutMs, &id);
  }
  if (!s.ok()) return report(s.withContext("weftGetUniqueId"));
  weft::encodeUniqueId(id, uniqueId);
  return weftSuccess;
}

weftResult_t weftCommInitRank(weftComm_t* comm, int nranks, weftUniqueId commId, int rank) {
  return weft::initRankApi(comm, nranks, commId, rank, nullptr);
}

weftResult_t weftCommInitRankConfig(weftComm_t* comm, int nranks, weftUniqueId commId, int rank,
                                    weftConfig_t* config) {
  return weft::initRankApi(comm, nranks, commId, rank, config);
}

weftResult_t weftCommInitAll(weftComm_t* comms, int ndev, const int* /*devlist*/) {
  if (comms == nullptr) return report(Status(weftInvalidArgument, "comms is NULL"));
  if (ndev < 1) {
    return report(weft::errorf(weftInvalidArgument, "ndev must be at least 1, not %d", ndev));
  }
  weftUniqueId id;
  if (weftResult_t r = weftGetUniqueId(&id); r != weftSuccess) return r;
  std::vector<weftResult_t> results(static_cast<size_t>(ndev), weftSuccess);
  std::vector<std::string> errors(static_cast<size_t>(ndev));
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(ndev));
  for (int r = 0; r < ndev; ++r) {
    threads.emplace_back([&, r] {
      results[r] = weftCommInitRank(&comms[r], ndev, id, r);
      if (results[r] != weftSuccess) errors[r] = weftGetLastError(nullptr);
    });
  }
  for (auto& t : threads)
    t.join();
  for (int r = 0; r < ndev; ++r) {
    if (results[r] == weftSuccess) continue;
    for (int k = 0; k < ndev; ++k) {
      if (results[k] == weftSuccess) weftCommDestroy(comms[k]);
      comms[k] = nullptr;
    }
    return report(
        Status(results[r], "weftCommInitAll: rank " + std::to_string(r) + ": " + errors[r]));
  }
  return weftSuccess;
}

weftResult_t weftCommInitFromEnv(weftComm_t* comm) {
  if (comm == nullptr) return report(Status(weftInvalidArgument, "comm is NULL"));
  weft::logVersionBannerOnce();  // before anything this init logs
  weft::LaunchInfo info;
  Status s = weft::readLaunchInfo(&info);
  weft::UniqueIdData id;
  if (s.ok()) s = weft::idFromLaunchInfo(info, &id);
  if (!s.ok()) return report(s.withContext("weftCommInitFromEnv"));
  if (!info.secretFromLauncher && info.rank == 0) {
    WEFT_WARN(
        kInit,
        "no WEFT_COMM_SECRET for ranks from %s: the rendezvous secret is derived from the job's "
        "identity, so whoever can reach %s and knows the job could join; set "
        "WEFT_COMM_SECRET (32 hex digits) in every rank's environment, or launch with "
        "weft-run, which does",
        info.launcher.c_str(), info.rootAddress.c_str());
  }
  weftUniqueId encoded;
  weft::encodeUniqueId(id, &encoded);
  return weft::initRankApi(comm, info.size, encoded, info.rank, nullptr);
}

weftResult_t weftCommSplit(weftComm_t comm, int color, int key, weftComm_t* newcomm,
                           weftConfig_t* config) {
  Communicator* parent = nullptr;
  Status s = weft::lookupComm(comm, &parent);
  if (!s.ok()) return report(s.withContext("weftCommSplit"));
  if (newcomm == nullptr) return report(Status(weftInvalidArgument, "newcomm is NULL"), parent);
  *newcomm = nullptr;
  if (color < 0 && color != WEFT_SPLIT_NOCOLOR) {
    return report(weft::errorf(weftInvalidArgument,
                               "color must be >= 0 or WEFT_SPLIT_NOCOLOR, not %d", color),
                  parent);
  }
  // Split is collective over the parent: it takes its turn like any other operation.
  uint64_t ticket = parent->takeTicket();
  s = parent->waitForTurn(ticket);
  int newRank = -1;
  int newSize = 0;
  weft::UniqueIdData id;
  if (s.ok()) s = weft::splitIds(*parent, color, key, &newRank, &newSize, &id);
  parent->endTurn();
  if (!s.ok()) return report(s.withContext("weftCommSplit"), parent);
  if (newRank < 0) return weftSuccess;
  weftUniqueId encoded;
  weft::encodeUniqueId(id, &encoded);
  weftConfig_t inherited = WEFT_CONFIG_INITIALIZER;
  if (config == nullptr) {
    inherited.timeoutMs = static_cast<int>(parent->config().timeoutMs);
    inherited.netName = parent->config().transport.c_str();
    inherited.nSocketsPerPeer = parent->config().nSocketsPerPeer;
    inherited.logCalls = parent->config().logCalls ? 1 : 0;
    config = &inherited;
  }
  return weft::initRankApi(newcomm, newSize, encoded, newRank, config);
}

weftResult_t weftCommFinalize(weftComm_t comm) {
  Communicator* c = nullptr;
  Status s = weft::lookupComm(comm, &c);
  if (s.ok()) s = c->drain();
  if (!s.ok()) return report(s.withContext("weftCommFinalize"), c);
  c->markFinalized();
  return weftSuccess;
}

weftResult_t weftCommDestroy(weftComm_t comm) {
  Communicator* c = nullptr;
  Status s = weft::lookupCommAnyState(comm, &c);
  if (s.ok()) s = weft::release(c);
  return report(s.withContext("weftCommDestroy"));
}

weftResult_t weftCommAbort(weftComm_t comm) {
  Communicator* c = nullptr;
  Status s = weft::lookupCommAnyState(comm, &c);
  if (!s.ok()) return report(s.withContext("weftCommAbort"));
  c->abort();
  return report(weft::release(c).withContext("weftCommAbort"));
}

weftResult_t weftCommCount(const weftComm_t comm, int* count) {
  Communicator* c = nullptr;
  Status s = weft::lookupCommAnyState(comm, &c);
  if (s.ok() && count == nullptr) s = Status(weftInvalidArgument, "count is NULL");
  if (!s.ok()) return report(s.withContext("weftCommCount"));
  *count = c->nranks();
  return weftSuccess;
}

weftResult_t weftCommUserRank(const weftComm_t comm, int* rank) {
  Communicator* c = nullptr;
  Status s = weft::lookupCommAnyState(comm, &c);
  if (s.ok() && rank == nullptr) s = Status(weftInvalidArgument, "rank is NULL");
  if (!s.ok()) return report(s.withContext("weftCommUserRank"));
  *rank = c->rank();
  return weftSuccess;
}

weftResult_t weftCommGetAsyncError(weftComm_t comm, weftResult_t* asyncError) {
  Communicator* c = nullptr;
  Status s = weft::lookupCommAnyState(comm, &c);
  if (s.ok() && asyncError == nullptr) s = Status(weftInvalidArgument, "asyncError is NULL");
  if (!s.ok()) return report(s.withContext("weftCommGetAsyncError"));
  *asyncError = c->asyncError();
  return weftSuccess;
}

weftResult_t weftCommGetStats(weftComm_t comm, weftCommStats_t* stats) {
  Communicator* c = nullptr;
  Status s = weft::lookupCommAnyState(comm, &c);
  if (s.ok() && stats == nullptr) s = Status(weftInvalidArgument, "stats is NULL");
  if (s.ok() && stats->size < offsetof(weftCommStats_t, byKind)) {
    s = weft::errorf(weftInvalidArgument,
                     "stats->size is %zu, too small for any weftCommStats_t: set it to "
                     "sizeof(weftCommStats_t) before the call",
                     stats->size);
  }
  if (!s.ok()) return report(s.withContext("weftCommGetStats"));
  // A caller built with fewer kinds gets those it knows; one built with more keeps its own
  // values of the rest.
  weftCommStats_t all{};
  c->stats().read(&all);
  const size_t size = stats->size;
  memcpy(reinterpret_cast<char*>(stats) + sizeof(size_t),
         reinterpret_cast<const char*>(&all) + sizeof(size_t),
         std::min(size, sizeof(all)) - sizeof(size_t));
  return weftSuccess;
}

weftResult_t weftCommResetStats(weftComm_t comm) {
  Communicator* c = nullptr;
  Status s = weft::lookupCommAnyState(comm, &c);
  if (!s.ok()) return report(s.withContext("weftCommResetStats"));
  c->stats().reset();
  return weftSuccess;
}

}  // extern "C"
