// Helpers for the topology tests: the data files, and finding devices by name or bus id.
#pragma once

#include <string>

#include "topology/system.h"

namespace weft::topo::test {

// tests/topology/data/<name>
std::string dataPath(const std::string& name);
// tests/topology/fuzz/corpus/<name>: the fuzzers' hand-written seeds
std::string corpusPath(const std::string& name);
// All topology files of the data folder (not SOURCES.md), sorted.
std::vector<std::string> dataFiles();

// The whole file at `path` ("" when it cannot be read).
std::string readFile(const std::string& path);

// Loads a data file; the test fails (fatally, via ADD_FAILURE + empty system) when it cannot.
System load(const std::string& name);

// The node named `name` (GPU3, mlx5_0, ...) or with that bus id; -1 when absent.
int find(const System& system, const std::string& nameOrBusId);

// A directory removed at destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string file(const std::string& name, const std::string& text) const;  // writes, returns path

 private:
  std::string path_;
};

}  // namespace weft::topo::test
