// The one place where WEFT_* environment variables are read. Each is documented in the
// README's table; weftConfig_t overrides the per-communicator ones.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "src/base/status.h"

namespace weft {

struct EnvConfig {
  // Logging (WEFT_DEBUG, WEFT_DEBUG_SUBSYS, WEFT_DEBUG_FILE).
  std::string debugLevel;
  std::string debugSubsys;
  std::string debugFile;

  // Waits and errors.
  int64_t timeoutMs = 300'000;  // WEFT_TIMEOUT, in seconds in the environment
  std::string wait = "auto";    // WEFT_WAIT: auto | spin | yield | block (src/base/wait.h)
  int64_t waitSliceUs = 100;    // WEFT_WAIT_SLICE_US: 0, or 100-100000 (src/base/sched_slice.h)
  // The flight recorder (src/comm/flight_recorder.h): calls kept per communicator, and where
  // their records go on an error, a timeout or SIGUSR1 (a file name prefix; %h host, %p pid).
  int traceBuffer = 1000;  // WEFT_TRACE_BUFFER: 0 is off
  std::string traceDump;   // WEFT_TRACE_DUMP

  // Transports.
  std::string transport = "auto";     // WEFT_TRANSPORT: auto | shm | tcp
  std::string net = "auto";           // WEFT_NET: auto | tcp | ucx
  std::string socketIfname;           // WEFT_SOCKET_IFNAME
  std::string socketFamily;           // WEFT_SOCKET_FAMILY: AF_INET | AF_INET6 | "" (either)
  int nSocketsPerPeer = 2;            // WEFT_NSOCKS_PERPEER
  size_t socketPaceBytes = 1u << 19;  // WEFT_SOCKET_PACE_BYTES (512K, 0 is off)
  size_t shmRingBytes = 4u << 20;     // WEFT_SHM_RING_BYTES
  size_t shmSlotBytes = 1u << 20;     // WEFT_SHM_SLOT_BYTES: room for direct collectives
  size_t shmStagingBytes = 2u << 20;  // WEFT_SHM_STAGING_BYTES: chunks of staged collectives
  size_t directBytes = 64u << 10;     // WEFT_DIRECT_BYTES: per-rank data of direct collectives
  size_t shmStreamBytes = 8u << 20;   // WEFT_SHM_STREAM_BYTES: outputs stored past the cache
  // ... where the host's ranks outnumber its cores, unless WEFT_SHM_STREAM_BYTES is set.
  size_t shmStreamBytesOversubscribed = 1u << 20;
  // Single-copy collectives (collectives/single_copy.h): the per-peer sizes and the kinds.
  size_t shmSingleCopyBytes = 256u << 10;   // WEFT_SHM_SINGLE_COPY_BYTES: 0 is off
  size_t shmSingleCopyMaxBytes = 2u << 20;  // WEFT_SHM_SINGLE_COPY_MAX_BYTES: 0 is no limit
  std::string shmSingleCopyColls = "allgather,alltoall";  // WEFT_SHM_SINGLE_COPY_COLLS
  int shmSingleCopyMaxRanks = 0;        // WEFT_SHM_SINGLE_COPY_MAX_RANKS: 0 is no limit
  std::string shmSingleCopy = "auto";   // WEFT_SHM_SINGLE_COPY: never | auto | always
  std::string shmStageStores = "auto";  // WEFT_SHM_STAGE_STORES: auto | cached | streamed
  std::string hostId;                   // WEFT_HOSTID
  std::string topoFile;                 // WEFT_TOPO_FILE: a topology file used instead of discovery

  // Algorithms.
  std::string hierarchy = "auto";  // WEFT_HIERARCHY: auto | on | off (tiers across hosts)
  bool calibrate = true;           // WEFT_CALIBRATE: measure links at init for the cost model
  std::string algo;                // WEFT_ALGO
  size_t chunkBytes = 1u << 20;    // WEFT_CHUNK_BYTES: pipelining slice of ring and tree
};
// The launcher's variables (WEFT_RANK, WEFT_WORLD_SIZE, WEFT_COMM_ID, WEFT_COMM_SECRET and those
// of mpirun, srun and torchrun) are read in src/bootstrap/launch_env.cc.

// What parsing found: a line for each bad value ("WEFT_TRANSPORT=ib is not one of auto, shm,
// tcp"), and every variable that was set, with its value.
struct EnvReport {
  std::vector<std::string> problems;
  std::vector<std::pair<std::string, std::string>> set;
};

// Parsed once, on first use; a bad value leaves that setting at its default.
const EnvConfig& env();
const EnvReport& envReport();
// weftInvalidArgument naming every bad value, or ok: every communicator's init checks it, so a
// mistyped setting stops the job instead of running it with the default.
Status checkEnv();
// Parses the variables as they are now (env() keeps the first parse).
EnvConfig parseEnv(EnvReport* report);

// Reads one variable; empty optional when unset or empty.
std::optional<std::string> getEnv(const char* name);

// Parses a byte size with an optional K/M/G suffix (powers of 1024).
std::optional<size_t> parseBytes(const std::string& text);

}  // namespace weft
