// Rank, size and rendezvous from the launcher's environment, for weftCommInitFromEnv: weft-run
// (WEFT_RANK, WEFT_WORLD_SIZE, WEFT_COMM_ID, WEFT_COMM_SECRET), Open MPI's mpirun
// (OMPI_COMM_WORLD_*), Slurm's srun (SLURM_PROCID, SLURM_NTASKS, SLURM_STEP_NODELIST) and
// torchrun (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "src/base/status.h"
#include "src/bootstrap/wire.h"

namespace weft {

struct LaunchInfo {
  int rank = 0;
  int size = 0;
  std::string launcher;     // "WEFT_RANK/WEFT_WORLD_SIZE (...)", "Open MPI", "Slurm", ...
  std::string rootAddress;  // host:port where rank 0 runs the rendezvous root
  Secret secret{};
  bool secretFromLauncher = false;  // false: derived from the job's identity, not secret
};

using EnvReader = std::function<std::optional<std::string>(const char*)>;

// env reads one variable (the process environment by default; tests pass their own).
Status readLaunchInfo(const EnvReader& env, LaunchInfo* out);
Status readLaunchInfo(LaunchInfo* out);

// The first host of a Slurm host list: "node[03-05,7],gpu1" -> "node03".
std::string firstSlurmHost(const std::string& nodelist);

}  // namespace weft

namespace weft {

struct UniqueIdData;

// Points id at a root that rank 0 starts at hostPort (WEFT_COMM_ID or the launcher's address).
Status setLaunchRoot(const std::string& hostPort, UniqueIdData* id);

// The id all ranks of a launch agree on without talking: the root at info.rootAddress (started
// by rank 0), the launch's secret, and a tag derived from both.
Status idFromLaunchInfo(const LaunchInfo& info, UniqueIdData* out);

}  // namespace weft
