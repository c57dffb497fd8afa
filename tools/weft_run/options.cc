#include "tools/weft_run/options.h"

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include <CLI/CLI.hpp>

#include "tools/version.h"
#include "weft/weft.h"

namespace weft::run {
namespace {

constexpr const char* kDescription =
    "weft-run: start N ranks of a program on this host or on several (--hosts, --hostfile:\n"
    "through the remote shell, ssh unless --rsh says otherwise), with the environment that\n"
    "weftCommInitFromEnv reads (WEFT_RANK, WEFT_WORLD_SIZE, WEFT_LOCAL_RANK, WEFT_LOCAL_SIZE,\n"
    "WEFT_COMM_ID, WEFT_COMM_SECRET); ranks on other hosts also get this environment's WEFT_*\n"
    "variables. Output lines are prefixed with the rank; if a rank fails the others are "
    "stopped.\n\n"
    "usage: weft-run -n N [options] [--] program [args...]\n"
    "       weft-run --hosts a:2,b:2 [-n N] [options] [--] program [args...]";

// Durations beyond this (about 30 years) would overflow the clock arithmetic.
constexpr double kMaxSeconds = 1e9;

bool validEnvName(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// Checks what CLI11 cannot express; returns an error message or "".
std::string validate(Options& o, const std::vector<std::string>& envSpecs,
                     const std::string& hostList, const std::string& hostfile) {
  if (!hostList.empty() && !hostfile.empty()) return "--hosts and --hostfile exclude each other";
  std::string error;
  if (!hostList.empty()) {
    auto hosts = parseHostList(hostList, &error);
    if (!hosts) return "--hosts: " + error;
    o.hosts = *hosts;
  }
  if (!hostfile.empty()) {
    std::ifstream in(hostfile);
    if (!in) return "--hostfile: cannot read '" + hostfile + "'";
    std::stringstream text;
    text << in.rdbuf();
    auto hosts = parseHostfile(text.str(), &error);
    if (!hosts) return "--hostfile " + hostfile + ": " + error;
    o.hosts = *hosts;
  }
  int slots = 0;
  for (const HostSlots& h : o.hosts)
    slots += h.slots;
  if (o.nranks == 0 && slots == 0) return "-n is required without --hosts or --hostfile";
  if (o.nranks == 0) o.nranks = slots;
  if (slots > 0 && o.nranks > slots) {
    return "-n " + std::to_string(o.nranks) + " ranks but the hosts have " + std::to_string(slots) +
           " slots";
  }
  if (!o.commId.empty() && !validCommId(o.commId)) {
    return "--comm-id: expected HOST:PORT with a port in 1..65535, got '" + o.commId + "'";
  }
  for (const std::string& spec : envSpecs) {
    auto kv = parseEnvSpec(spec, &error);
    if (!kv) return "-x " + spec + ": " + error;
    o.env.push_back(*kv);
  }
  if (o.command.empty()) return "no program to run (usage: weft-run -n N [options] program ...)";
  return "";
}

}  // namespace

std::optional<std::pair<std::string, std::string>> parseEnvSpec(const std::string& spec,
                                                                std::string* error) {
  size_t eq = spec.find('=');
  std::string name = spec.substr(0, eq);
  if (!validEnvName(name)) {
    *error = "not a variable name: '" + name + "'";
    return std::nullopt;
  }
  if (eq != std::string::npos) return std::make_pair(name, spec.substr(eq + 1));
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) {
    *error = name + " is not set here; write " + name + "=value";
    return std::nullopt;
  }
  return std::make_pair(name, std::string(value));
}

bool validCommId(const std::string& commId) {
  size_t colon = commId.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == commId.size()) return false;
  std::string port = commId.substr(colon + 1);
  if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos) return false;
  int p = std::stoi(port);
  return p >= 1 && p <= 65535;
}

ParseResult parseOptions(int argc, const char* const* argv) {
  Options o;
  std::vector<std::string> envSpecs;
  CLI::App app(kDescription, "weft-run");
  // The program's own options follow its name: stop parsing at the first unknown argument.
  app.prefix_command();
  app.set_version_flag("--version", weft::tools::versionText("weft-run"));
  app.add_option("-n,--np", o.nranks, "Number of ranks to start (default with hosts: their slots)")
      ->check(CLI::Range(1, 65536));
  std::string hostList;
  std::string hostfile;
  app.add_option("--hosts", hostList, "Hosts and their slots; ranks fill them in order")
      ->type_name("HOST[:SLOTS],...");
  app.add_option("--hostfile", hostfile, "Hosts from a file, one a line: HOST [slots=N]")
      ->type_name("FILE");
  app.add_option("--rsh", o.rsh, "Remote shell for ranks on other hosts (split on spaces)")
      ->capture_default_str()
      ->type_name("CMD");
  app.add_option("--comm-id", o.commId,
                 "Rendezvous address for WEFT_COMM_ID (default: 127.0.0.1 and a free port)")
      ->type_name("HOST:PORT");
  app.add_option("-x,--env", envSpecs,
                 "Set a variable for all ranks (repeatable); VAR alone passes its value here")
      ->type_name("VAR=value")
      ->allow_extra_args(false);  // one VAR=value per -x: the program name may follow
  bool noPrefix = false;
  app.add_flag("--no-prefix", noPrefix, "Do not prefix output lines with [rank]");
  app.add_option("--grace-seconds", o.graceSeconds,
                 "Time between SIGTERM and SIGKILL when stopping ranks")
      ->capture_default_str()
      ->check(CLI::Range(0.0, kMaxSeconds));
  app.add_option("--timeout", o.timeoutSeconds, "Stop everything after this long (0: never)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, kMaxSeconds));

  const std::map<std::string, Bind> binds = {
      {"auto", Bind::kAuto}, {"cores", Bind::kCores}, {"none", Bind::kNone}};
  app.add_option("--bind-to", o.bind,
                 "Ranks on this host: cores gives each an equal, disjoint share of the cores "
                 "weft-run may use (a core each, in turn, where they are more); auto binds so "
                 "where the ranks are no more than the cores; none leaves them to the scheduler")
      ->transform(CLI::CheckedTransformer(binds))
      ->type_name("auto|cores|none")
      ->default_str("auto");

  ParseResult result;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    result.message = app.help();
    return result;
  } catch (const CLI::CallForVersion&) {
    result.message = weft::tools::versionText("weft-run") + "\n";
    return result;
  } catch (const CLI::ParseError& e) {
    result.exitCode = 2;
    result.message = std::string("weft-run: ") + e.what() + "\nRun with --help for more.\n";
    return result;
  }
  o.prefix = !noPrefix;
  o.command = app.remaining();
  std::string error;
  // CLI11 keeps a "--" that ends our options; the program name follows it. Without one, a
  // leading dash is a mistyped option of ours rather than a program.
  if (!o.command.empty() && o.command.front() == "--") {
    o.command.erase(o.command.begin());
  } else if (!o.command.empty() && o.command.front().starts_with("-")) {
    error = "unknown option '" + o.command.front() + "' (put -- before a program named so)";
  }
  if (error.empty()) error = validate(o, envSpecs, hostList, hostfile);
  if (!error.empty()) {
    result.exitCode = 2;
    result.message = "weft-run: " + error + "\n";
    return result;
  }
  result.options = std::move(o);
  return result;
}

}  // namespace weft::run
