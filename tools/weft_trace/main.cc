// weft-trace: merges the flight-recorder dumps of a job's ranks (WEFT_TRACE_DUMP) and names the
// problem: missing ranks, the first collective the ranks called differently, the ranks that
// are behind and what they were doing, and each rank's error.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "tools/version.h"
#include "tools/weft_trace/analysis.h"
#include "tools/weft_trace/dump.h"

namespace {

// The files named, with a folder standing for the .json files in it.
std::vector<std::string> expand(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (!std::filesystem::is_directory(p, ec)) {
      files.push_back(p);
      continue;
    }
    std::vector<std::string> inside;
    for (const auto& entry : std::filesystem::directory_iterator(p, ec)) {
      if (entry.path().extension() == ".json") inside.push_back(entry.path().string());
    }
    std::sort(inside.begin(), inside.end());
    files.insert(files.end(), inside.begin(), inside.end());
  }
  return files;
}

int run(int argc, char** argv) {
  CLI::App app{
      "weft-trace: reads the trace dumps of a job's ranks (written where WEFT_TRACE_DUMP says, on "
      "an error, a timeout or SIGUSR1) and names the problem: missing ranks, the first "
      "collective the ranks called differently, the ranks that are behind and what they were "
      "doing, and each rank's error. Exit status: 0 after a report, 2 for unreadable input.",
      "weft-trace"};
  app.set_version_flag("--version", weft::tools::versionText("weft-trace"));
  std::vector<std::string> paths;
  app.add_option("dumps", paths, "dump files, or folders of them (*.json)")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  std::vector<weft::trace::RankDump> dumps;
  for (const std::string& file : expand(paths)) {
    std::ifstream in(file);
    if (!in) {
      std::cerr << "weft-trace: cannot read " << file << "\n";
      return 2;
    }
    std::stringstream text;
    text << in.rdbuf();
    weft::trace::RankDump d;
    std::string error;
    if (!weft::trace::parseDump(text.str(), file, &d, &error)) {
      std::cerr << "weft-trace: " << error << "\n";
      return 2;
    }
    dumps.push_back(std::move(d));
  }
  if (dumps.empty()) {
    std::cerr << "weft-trace: no dumps found in the paths given\n";
    return 2;
  }
  std::cout << weft::trace::analyze(dumps);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "weft-trace: " << e.what() << "\n";
    return 2;
  }
}
