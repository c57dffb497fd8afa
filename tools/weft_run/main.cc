// weft-run: local multi-rank launcher. See options.cc for the command line.
#include <cstdio>

#include "tools/weft_run/launcher.h"
#include "tools/weft_run/options.h"

int main(int argc, char** argv) {
  weft::run::ParseResult parsed = weft::run::parseOptions(argc, argv);
  if (!parsed.options) {
    std::fputs(parsed.message.c_str(), parsed.exitCode == 0 ? stdout : stderr);
    return parsed.exitCode;
  }
  return weft::run::launch(*parsed.options);
}
