#include "tools/weft_topo/options.h"

#include <CLI/CLI.hpp>

#include "tools/version.h"
#include "weft/weft.h"

namespace weft::topotool {
namespace {

constexpr const char* kDescription =
    "weft-topo: the machine as Weft sees it -- CPUs, NUMA nodes, PCIe switches, GPUs, NICs and\n"
    "NVLinks -- and the rings and trees Weft would build on it.\n\n"
    "Without --topo it describes this machine (or the file WEFT_TOPO_FILE names). --topo reads\n"
    "an NCCL topology XML, an hwloc XML or the output of `nvidia-smi topo -m`.\n\n"
    "exit status: 0 success, 1 bad usage or a failed tool, 2 a topology file that cannot be read";

}  // namespace

ParseResult parseOptions(int argc, const char* const* argv) {
  ParseResult result;
  Options o;
  CLI::App app(kDescription, "weft-topo");
  app.set_version_flag("--version", weft::tools::versionText("weft-topo"));
  app.add_option("--topo", o.topoFile, "Read this topology file instead of discovering")
      ->type_name("FILE");
  app.add_flag("--matrix", o.matrix,
               "Print the nvidia-smi topo -m table: GPU x GPU and GPU x NIC path classes, CPU "
               "and NUMA affinity");
  int ringRanks = 0, ranks = 0;
  CLI::Option* rings =
      app.add_option("--rings", ringRanks, "Search rings for N ranks per host (no N: as --ranks)")
          ->type_name("[N]")
          ->expected(0, 1)
          ->check(CLI::Range(1, 4096));
  app.add_flag("--trees", o.trees,
               "Search trees (a double binary tree across hosts) for the ranks the rings have");
  app.add_option("--ranks", ranks,
                 "Ranks per host when --rings gives no N (default: one per GPU; with no GPU or "
                 "with --device cpu, one per NUMA node)")
      ->type_name("N")
      ->check(CLI::Range(1, 4096));
  app.add_option("--hosts", o.hosts, "Plan for H identical hosts")
      ->type_name("H")
      ->capture_default_str()
      ->check(CLI::Range(1, 65536));
  std::string device = "auto";
  app.add_option("--device", device,
                 "Ranks on GPUs or CPUs (auto: GPUs when there are enough of them)")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "gpu", "cpu"}));
  app.add_option("--max-channels", o.channels.maxChannels, "Most rings to build")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  app.add_option("--channel-cap", o.channels.channelCap,
                 "GB/s one channel can drive (the search does not give a ring more)")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 1e6));
  app.add_flag("--json", o.json, "Print the system (and rings/trees) as JSON");
  app.add_flag("--dot", o.dot, "Print a Graphviz drawing of the system");
  app.add_option("--png", o.png, "Draw the system into FILE with Graphviz's dot")
      ->type_name("FILE");
  app.add_flag("--nccl-xml", o.ncclXml, "Print the system as NCCL topology XML");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    result.exitCode = e.get_exit_code();
    result.message = e.get_exit_code() == 0 ? app.help() : std::string(e.what()) + "\n";
    if (dynamic_cast<const CLI::CallForHelp*>(&e)) result.message = app.help();
    if (dynamic_cast<const CLI::CallForVersion*>(&e)) result.message = e.what() + std::string("\n");
    if (result.exitCode != 0) {
      result.message = "weft-topo: " + result.message + "Run with --help for more information.\n";
      result.exitCode = 1;
    }
    return result;
  }
  o.rings = rings->count() > 0;
  o.ranks = ringRanks > 0 ? ringRanks : ranks;
  o.device = device == "gpu"   ? topo::RankDevice::kGpu
             : device == "cpu" ? topo::RankDevice::kCpu
                               : topo::RankDevice::kAuto;
  int formats = o.json + o.dot + o.ncclXml;
  if (formats > 1) {
    result.exitCode = 1;
    result.message =
        "weft-topo: --json, --dot and --nccl-xml each print a whole document; "
        "choose one\n";
    return result;
  }
  if (o.channels.minChannels > o.channels.maxChannels)
    o.channels.minChannels = o.channels.maxChannels;
  result.options = o;
  return result;
}

}  // namespace weft::topotool
