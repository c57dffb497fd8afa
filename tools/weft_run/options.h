// Command line of weft-run.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tools/weft_run/binding.h"
#include "tools/weft_run/hosts.h"

namespace weft::run {

struct Options {
  int nranks = 0;  // with hosts given and -n not: all their slots
  // Hosts and their slots (--hosts or --hostfile); empty: every rank on this host.
  std::vector<HostSlots> hosts;
  std::string rsh = "ssh";  // the remote shell: its words, then the host, then a command line
  std::string commId;       // HOST:PORT of the rendezvous; empty: a free port on 127.0.0.1
  std::vector<std::pair<std::string, std::string>> env;  // -x VAR=value, in command-line order
  bool prefix = true;                                    // "[rank] " before each output line
  double graceSeconds = 5;                               // SIGTERM to SIGKILL when stopping ranks
  double timeoutSeconds = 0;                             // 0: no limit
  Bind bind = Bind::kAuto;                               // this host's ranks (binding.h)
  std::vector<std::string> command;                      // program and its arguments
};

// Either options to run with, or an exit code and a text to print (help, version or an error).
struct ParseResult {
  std::optional<Options> options;
  int exitCode = 0;
  std::string message;  // to stdout when exitCode is 0, else to stderr
};

ParseResult parseOptions(int argc, const char* const* argv);

// "VAR=value" -> (VAR, value); "VAR" alone takes VAR's value in this environment, as mpirun -x
// does. Empty optional, with *error set, for a bad name or an unset variable.
std::optional<std::pair<std::string, std::string>> parseEnvSpec(const std::string& spec,
                                                                std::string* error);

// True for HOST:PORT with a non-empty host and a port in 1..65535.
bool validCommId(const std::string& commId);

}  // namespace weft::run
