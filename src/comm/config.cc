#include "src/comm/config.h"

#include <cstddef>
#include <cstring>

#include "src/base/env.h"
#include "src/comm/version_banner.h"

namespace weft {

Status resolveConfig(const weftConfig_t* user, CommConfig* out) {
  logVersionBannerOnce();
  WEFT_RETURN_IF_ERROR(checkEnv());
  const EnvConfig& e = env();
  CommConfig c;
  c.timeoutMs = e.timeoutMs;
  c.transport = e.transport;
  c.net = e.net;
  c.nSocketsPerPeer = e.nSocketsPerPeer;
  c.socketPaceBytes = e.socketPaceBytes;
  c.shmRingBytes = e.shmRingBytes;
  c.shmSlotBytes = e.shmSlotBytes;
  c.shmStagingBytes = e.shmStagingBytes;
  c.directBytes = e.directBytes;
  c.shmStreamBytes = e.shmStreamBytes;
  c.shmStreamBytesOversubscribed = e.shmStreamBytesOversubscribed;
  c.shmSingleCopyBytes = e.shmSingleCopyBytes;
  c.shmSingleCopyMaxBytes = e.shmSingleCopyMaxBytes;
  c.shmSingleCopyColls = e.shmSingleCopyColls;
  c.shmStageStores = e.shmStageStores;
  c.shmSingleCopyMaxRanks = e.shmSingleCopyMaxRanks;
  c.shmSingleCopy = e.shmSingleCopy;
  c.chunkBytes = e.chunkBytes;
  c.algo = e.algo;
  c.hierarchy = e.hierarchy;
  c.calibrate = e.calibrate;
  if (user != nullptr) {
    // A caller built before logCalls existed passes a config that ends before it.
    if (user->magic != WEFT_CONFIG_MAGIC || user->size < offsetof(weftConfig_t, logCalls)) {
      return Status(weftInvalidArgument, "config was not initialised with WEFT_CONFIG_INITIALIZER");
    }
    if (user->blocking != WEFT_CONFIG_UNDEF_INT) {
      if (user->blocking != 0 && user->blocking != 1) {
        return errorf(weftInvalidArgument, "config.blocking must be 0 or 1, not %d",
                      user->blocking);
      }
      c.blocking = user->blocking == 1;
    }
    if (user->timeoutMs != WEFT_CONFIG_UNDEF_INT) {
      if (user->timeoutMs < 0) {
        return errorf(weftInvalidArgument, "config.timeoutMs must be >= 0, not %d",
                      user->timeoutMs);
      }
      c.timeoutMs = user->timeoutMs;
    }
    if (user->netName != nullptr) {
      if (strcmp(user->netName, "shm") != 0 && strcmp(user->netName, "tcp") != 0 &&
          strcmp(user->netName, "auto") != 0) {
        return errorf(weftInvalidArgument, "config.netName '%s' is not shm, tcp or auto",
                      user->netName);
      }
      c.transport = user->netName;
    }
    if (user->nSocketsPerPeer != WEFT_CONFIG_UNDEF_INT) {
      if (user->nSocketsPerPeer < 1 || user->nSocketsPerPeer > 16) {
        return errorf(weftInvalidArgument, "config.nSocketsPerPeer must be 1..16, not %d",
                      user->nSocketsPerPeer);
      }
      c.nSocketsPerPeer = user->nSocketsPerPeer;
    }
    if (user->commName != nullptr) c.name = user->commName;
    const bool hasLogCalls = user->size >= offsetof(weftConfig_t, logCalls) + sizeof(int);
    if (hasLogCalls && user->logCalls != WEFT_CONFIG_UNDEF_INT) {
      if (user->logCalls != 0 && user->logCalls != 1) {
        return errorf(weftInvalidArgument, "config.logCalls must be 0 or 1, not %d",
                      user->logCalls);
      }
      c.logCalls = user->logCalls == 1;
    }
  }
  *out = c;
  return okStatus();
}

}  // namespace weft
