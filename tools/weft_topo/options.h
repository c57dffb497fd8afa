// weft-topo's command line.
#pragma once

#include <optional>
#include <string>

#include "topology/ranks.h"
#include "topology/ring_search.h"

namespace weft::topotool {

struct Options {
  std::string topoFile;  // --topo; empty: this machine (or WEFT_TOPO_FILE)
  bool matrix = false;   // --matrix
  bool rings = false;    // --rings [N]
  bool trees = false;    // --trees
  int ranks = 0;         // ranks per host: --rings N, else --ranks N; 0: topo::defaultRanksPerHost
  int hosts = 1;         // --hosts H
  topo::RankDevice device = topo::RankDevice::kAuto;  // --device
  topo::ChannelOptions channels;                      // --max-channels, --channel-cap
  bool json = false;                                  // --json
  bool dot = false;                                   // --dot
  std::string png;                                    // --png FILE
  bool ncclXml = false;                               // --nccl-xml
};

struct ParseResult {
  std::optional<Options> options;  // empty: print `message` and exit with `exitCode`
  std::string message;
  int exitCode = 0;
};

ParseResult parseOptions(int argc, const char* const* argv);

}  // namespace weft::topotool
