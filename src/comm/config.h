// A communicator's settings: weftConfig_t where the caller set a field, else the WEFT_*
// environment, else the default.
#pragma once

#include <cstdint>
#include <string>

#include "src/base/status.h"
#include "weft/weft.h"

namespace weft {

struct CommConfig {
  bool blocking = true;
  int64_t timeoutMs = 0;
  std::string transport = "auto";  // auto | shm | tcp
  std::string net = "auto";        // auto | tcp | ucx
  int nSocketsPerPeer = 1;
  size_t socketPaceBytes = 0;
  std::string name;
  bool logCalls = true;  // false: its calls leave no COLL log lines
  size_t shmRingBytes = 0;
  size_t shmSlotBytes = 0;
  size_t shmStagingBytes = 0;
  size_t directBytes = 0;
  size_t shmStreamBytes = 0;
  size_t shmStreamBytesOversubscribed = 0;
  size_t shmSingleCopyBytes = 0;
  size_t shmSingleCopyMaxBytes = 0;
  std::string shmSingleCopyColls;
  std::string shmStageStores = "auto";
  int shmSingleCopyMaxRanks = 0;
  std::string shmSingleCopy = "never";  // never | auto | always
  size_t chunkBytes = 0;
  std::string algo;
  std::string hierarchy = "auto";
  bool calibrate = true;
};

// user may be nullptr. Checks the struct's size, magic and version, and each field's range.
Status resolveConfig(const weftConfig_t* user, CommConfig* out);

}  // namespace weft
