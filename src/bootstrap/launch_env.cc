#include "src/bootstrap/launch_env.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "src/base/env.h"
#include "src/bootstrap/host_identity.h"
#include "src/bootstrap/unique_id.h"

namespace weft {
namespace {

// An integer variable: *out stays empty when it is unset; a value that is not a whole number
// that fits an int is an error naming the variable (strtol would wrap 4294967298 to 2).
Status readInt(const EnvReader& env, const char* name, std::optional<int>* out) {
  *out = std::nullopt;
  auto v = env(name);
  if (!v) return okStatus();
  char* end = nullptr;
  errno = 0;
  const long long n = strtoll(v->c_str(), &end, 10);
  if (end == v->c_str() || *end != '\0' || errno == ERANGE || n < INT_MIN || n > INT_MAX) {
    return errorf(weftInvalidArgument, "%s=%s is not an integer in [%d, %d]", name, v->c_str(),
                  INT_MIN, INT_MAX);
  }
  *out = static_cast<int>(n);
  return okStatus();
}

struct Convention {
  const char* launcher;
  const char* rankVar;
  const char* sizeVar;
};

// Tried in order; the first whose rank and size are both set wins.
constexpr Convention kConventions[] = {
    {"WEFT_RANK/WEFT_WORLD_SIZE (weft-run or by hand)", "WEFT_RANK", "WEFT_WORLD_SIZE"},
    {"Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
    {"MPICH", "PMI_RANK", "PMI_SIZE"},
    {"Slurm", "SLURM_PROCID", "SLURM_NTASKS"},
    {"torchrun", "RANK", "WORLD_SIZE"},
};

bool parseSecret(const std::string& hex, Secret* out) {
  if (hex.size() != 32) return false;
  for (size_t i = 0; i < 16; ++i) {
    char byte[3] = {hex[2 * i], hex[2 * i + 1], '\0'};
    char* end = nullptr;
    long v = strtol(byte, &end, 16);
    if (*end != '\0') return false;
    (*out)[i] = static_cast<uint8_t>(v);
  }
  return true;
}

// Without a secret from the launcher, all ranks derive the same one from the job's identity.
// It keeps strangers of other jobs out, but anyone who can read the job's environment knows it.
Secret deriveSecret(const EnvReader& env, const std::string& root) {
  std::string identity = root;
  for (const char* var : {"SLURM_JOB_ID", "SLURM_STEP_ID", "OMPI_MCA_ess_base_jobid",
                          "PMIX_NAMESPACE", "TORCHELASTIC_RUN_ID"}) {
    if (auto v = env(var)) identity += std::string("|") + var + "=" + *v;
  }
  Secret s{};
  uint64_t a = hashString(identity);
  uint64_t b = hashString(identity + "#weft");
  memcpy(s.data(), &a, 8);
  memcpy(s.data() + 8, &b, 8);
  return s;
}

Status rootAddress(const EnvReader& env, const Convention& launcher, std::string* out) {
  if (auto v = env("WEFT_COMM_ID")) {
    *out = *v;
    return okStatus();
  }
  if (auto addr = env("MASTER_ADDR")) {
    // torchrun's own store listens on MASTER_PORT; the Weft root takes the port after it.
    std::optional<int> port;
    WEFT_RETURN_IF_ERROR(readInt(env, "MASTER_PORT", &port));
    if (!port) return Status(weftInvalidUsage, "MASTER_ADDR is set but MASTER_PORT is not");
    if (*port < 1 || *port > 65534) {  // the root takes the port after it
      return errorf(weftInvalidArgument, "MASTER_PORT=%d is not a port in [1, 65534]", *port);
    }
    *out = *addr + ":" + std::to_string(*port + 1);
    return okStatus();
  }
  if (strcmp(launcher.launcher, "Slurm") == 0) {
    auto nodes = env("SLURM_STEP_NODELIST");
    if (!nodes) nodes = env("SLURM_JOB_NODELIST");
    std::optional<int> job;
    WEFT_RETURN_IF_ERROR(readInt(env, "SLURM_JOB_ID", &job));
    if (nodes && job) {
      int port = 20000 + (*job % 20000);  // the same on every node of the job, without talking
      *out = firstSlurmHost(*nodes) + ":" + std::to_string(port);
      return okStatus();
    }
  }
  return errorf(weftInvalidUsage,
                "no rendezvous address: %s and %s name this rank, but neither WEFT_COMM_ID nor "
                "MASTER_ADDR and MASTER_PORT is set; set WEFT_COMM_ID=host:port (rank 0's host "
                "and a free port) in every rank's environment",
                launcher.rankVar, launcher.sizeVar);
}

}  // namespace

std::string firstSlurmHost(const std::string& nodelist) {
  size_t comma = nodelist.find(',');
  size_t bracket = nodelist.find('[');
  if (bracket == std::string::npos || (comma != std::string::npos && comma < bracket)) {
    return nodelist.substr(0, comma);
  }
  std::string prefix = nodelist.substr(0, bracket);
  size_t end = nodelist.find_first_of("-,]", bracket + 1);
  return prefix + nodelist.substr(bracket + 1, end - bracket - 1);
}

Status readLaunchInfo(const EnvReader& env, LaunchInfo* out) {
  *out = LaunchInfo();
  std::string halves;  // conventions with one variable of the two set, for the error
  for (const Convention& c : kConventions) {
    std::optional<int> rank, size;
    WEFT_RETURN_IF_ERROR(readInt(env, c.rankVar, &rank));
    WEFT_RETURN_IF_ERROR(readInt(env, c.sizeVar, &size));
    if (rank.has_value() != size.has_value()) {
      halves += strprintf("; %s is set but %s is not", rank ? c.rankVar : c.sizeVar,
                          rank ? c.sizeVar : c.rankVar);
    }
    if (!rank || !size) continue;
    if (*size <= 0 || *rank < 0 || *rank >= *size) {
      return errorf(weftInvalidArgument, "%s=%d and %s=%d do not name a rank", c.rankVar, *rank,
                    c.sizeVar, *size);
    }
    out->rank = *rank;
    out->size = *size;
    out->launcher = c.launcher;
    WEFT_RETURN_IF_ERROR(rootAddress(env, c, &out->rootAddress));
    if (auto hex = env("WEFT_COMM_SECRET")) {
      if (!parseSecret(*hex, &out->secret)) {
        return Status(weftInvalidArgument, "WEFT_COMM_SECRET must be 32 hex digits");
      }
      out->secretFromLauncher = true;
    } else {
      out->secret = deriveSecret(env, out->rootAddress);
    }
    return okStatus();
  }
  return errorf(weftInvalidUsage,
                "no launcher environment found: set WEFT_RANK and WEFT_WORLD_SIZE (or run under "
                "weft-run, mpirun, srun or torchrun)%s",
                halves.c_str());
}

Status readLaunchInfo(LaunchInfo* out) {
  return readLaunchInfo([](const char* name) { return getEnv(name); }, out);
}

}  // namespace weft

namespace weft {

Status setLaunchRoot(const std::string& hostPort, UniqueIdData* id) {
  SockAddr root;
  bool numeric = false;
  WEFT_RETURN_IF_ERROR(SockAddr::parse(hostPort, &root, &numeric));
  id->root = WireAddress::from(root);
  id->rootStartedByRank0 = true;
  id->rootAtGivenAddress = numeric && root.isLoopback();
  return okStatus();
}

Status idFromLaunchInfo(const LaunchInfo& info, UniqueIdData* out) {
  UniqueIdData id;
  const std::string& address = info.rootAddress;
  // Checked before the host is looked up, so that "host" alone is not reported as unknown.
  if (address.find(':') == std::string::npos || address.back() == ']') {
    return errorf(weftInvalidArgument, "rendezvous address '%s' needs a port: host:port",
                  address.c_str());
  }
  WEFT_RETURN_IF_ERROR(setLaunchRoot(address, &id));
  if (id.root.toSockAddr().port() == 0) {
    return errorf(weftInvalidArgument, "rendezvous address '%s' needs a port: host:port",
                  address.c_str());
  }
  id.secret = info.secret;
  std::string secretText(reinterpret_cast<const char*>(info.secret.data()), info.secret.size());
  id.commTag = hashString(info.rootAddress + "|" + secretText);
  *out = id;
  return okStatus();
}

}  // namespace weft
