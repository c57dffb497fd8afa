// Ranks on several hosts: the host list (--hosts, --hostfile), which host each rank goes to, and
// the shell command line that starts a rank on a host through the remote shell (--rsh).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace weft::run {

struct HostSlots {
  std::string name;
  int slots = 1;
};

// "a:2,b,c:3" (slots 1 where not given). Empty optional, with *error set, for a bad entry.
std::optional<std::vector<HostSlots>> parseHostList(const std::string& text, std::string* error);

// Open MPI's hostfile format: a host a line, "slots=N" after it (1 if absent), "#" comments;
// other keys (max_slots=) are accepted and ignored. A host named twice adds its slots.
std::optional<std::vector<HostSlots>> parseHostfile(const std::string& text, std::string* error);

// Where each rank runs, as Open MPI places by slot: the first host's slots, then the next's.
// Needs n <= the slots in all.
struct RankPlace {
  int host = 0;  // index into the host list
  int localRank = 0;
  int localSize = 0;
};
std::vector<RankPlace> placeRanks(const std::vector<HostSlots>& hosts, int n);

// Runs on this machine without the remote shell.
bool isLocalHost(const std::string& name);

// Quotes a word for sh.
std::string shellQuote(const std::string& word);

// The command line, for sh on the host, that runs command with the variables set and stops it
// when its standard input closes (weft-run closes it to stop the rank, and the remote shell
// closes it if weft-run dies). It exits with the program's status.
std::string remoteCommandLine(const std::vector<std::pair<std::string, std::string>>& vars,
                              const std::vector<std::string>& command, const std::string& cwd);

}  // namespace weft::run
