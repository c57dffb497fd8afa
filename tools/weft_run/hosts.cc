#include "tools/weft_run/hosts.h"

#include <sstream>

namespace weft::run {
namespace {

// A positive slot count, or 0.
int parseSlots(const std::string& text) {
  if (text.empty() || text.size() > 6 ||
      text.find_first_not_of("0123456789") != std::string::npos) {
    return 0;
  }
  return std::stoi(text);
}

bool validHostName(const std::string& name) {
  return !name.empty() && name.find_first_of(" \t'\"\\$`;|&<>()") == std::string::npos;
}

// Adds a host's slots (a host named twice adds up); false for a bad name or slot count.
bool addHost(std::vector<HostSlots>* hosts, const std::string& name, int slots) {
  if (!validHostName(name) || slots == 0) return false;
  for (HostSlots& h : *hosts) {
    if (h.name == name) {
      h.slots += slots;
      return true;
    }
  }
  hosts->push_back(HostSlots{name, slots});
  return true;
}

}  // namespace

std::optional<std::vector<HostSlots>> parseHostList(const std::string& text, std::string* error) {
  std::vector<HostSlots> hosts;
  std::stringstream in(text);
  std::string entry;
  while (std::getline(in, entry, ',')) {
    const size_t colon = entry.rfind(':');
    const std::string name = entry.substr(0, colon);
    const int slots = colon == std::string::npos ? 1 : parseSlots(entry.substr(colon + 1));
    if (!addHost(&hosts, name, slots)) {
      *error = "expected HOST or HOST:SLOTS with SLOTS >= 1, got '" + entry + "'";
      return std::nullopt;
    }
  }
  if (hosts.empty()) {
    *error = "no hosts in '" + text + "'";
    return std::nullopt;
  }
  return hosts;
}

std::optional<std::vector<HostSlots>> parseHostfile(const std::string& text, std::string* error) {
  std::vector<HostSlots> hosts;
  std::stringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    line = line.substr(0, line.find('#'));
    std::stringstream words(line);
    std::string name;
    if (!(words >> name)) continue;
    int slots = 1;
    std::string word;
    while (words >> word) {
      const size_t eq = word.find('=');
      const std::string key = word.substr(0, eq);
      if (key == "slots") {
        slots = eq == std::string::npos ? 0 : parseSlots(word.substr(eq + 1));
      } else if (key != "max_slots" && key != "max-slots") {
        *error = "line " + std::to_string(number) + ": unknown '" + word + "'";
        return std::nullopt;
      }
    }
    if (!addHost(&hosts, name, slots)) {
      *error = "line " + std::to_string(number) + ": expected HOST [slots=N] with N >= 1";
      return std::nullopt;
    }
  }
  if (hosts.empty()) {
    *error = "no hosts in the file";
    return std::nullopt;
  }
  return hosts;
}

std::vector<RankPlace> placeRanks(const std::vector<HostSlots>& hosts, int n) {
  std::vector<RankPlace> places;
  for (size_t h = 0; h < hosts.size() && static_cast<int>(places.size()) < n; ++h) {
    const int here = std::min(hosts[h].slots, n - static_cast<int>(places.size()));
    for (int l = 0; l < here; ++l)
      places.push_back(RankPlace{static_cast<int>(h), l, here});
  }
  return places;
}

bool isLocalHost(const std::string& name) {
  return name == "localhost" || name == "127.0.0.1";
}

std::string shellQuote(const std::string& word) {
  std::string q = "'";
  for (char c : word)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string remoteCommandLine(const std::vector<std::pair<std::string, std::string>>& vars,
                              const std::vector<std::string>& command, const std::string& cwd) {
  std::string run = "env";
  for (const auto& [name, value] : vars) {
    std::string assignment = name;
    assignment.append("=").append(value);
    run.append(" ").append(shellQuote(assignment));
  }
  for (const std::string& word : command)
    run += " " + shellQuote(word);
  // The program runs in the background with /dev/null for input; a loop of the shell's own
  // read (no child process) holds the real input and stops the program once it closes.
  return "cd " + shellQuote(cwd) + " 2>/dev/null; exec 3<&0; " + run +
         " </dev/null & p=$!; (while read -r _ <&3; do :; done; kill -TERM $p 2>/dev/null) & "
         "w=$!; exec 3<&-; wait $p; s=$?; kill $w 2>/dev/null; exit $s";
}

}  // namespace weft::run
