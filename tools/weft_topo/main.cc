// weft-topo: shows a machine's topology and the channels Weft builds on it. See options.cc.
#include <iostream>

#include "tools/weft_topo/options.h"
#include "tools/weft_topo/run.h"

int main(int argc, char** argv) {
  weft::topotool::ParseResult parsed = weft::topotool::parseOptions(argc, argv);
  if (!parsed.options) {
    (parsed.exitCode == 0 ? std::cout : std::cerr) << parsed.message;
    return parsed.exitCode;
  }
  return weft::topotool::run(*parsed.options, std::cout, std::cerr);
}
