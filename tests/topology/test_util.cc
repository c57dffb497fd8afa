#include "tests/topology/test_util.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "topology/load.h"

namespace weft::topo::test {

std::string dataPath(const std::string& name) {
  return std::string(WEFT_TOPO_DATA_DIR) + "/" + name;
}

std::string corpusPath(const std::string& name) {
  return std::string(WEFT_TOPO_DATA_DIR) + "/../fuzz/corpus/" + name;
}

std::vector<std::string> dataFiles() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(WEFT_TOPO_DATA_DIR)) {
    std::string name = e.path().filename().string();
    if (name != "SOURCES.md") out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

System load(const std::string& name) {
  System s;
  Status st = loadTopologyFile(dataPath(name), &s);
  if (!st.ok()) ADD_FAILURE() << name << ": " << st.message();
  return s;
}

int find(const System& s, const std::string& key) {
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    const Node& n = s.nodes[i];
    if (n.kind == NodeKind::kNet) continue;
    if (n.name == key || (!n.pci.busId.empty() && n.pci.busId == key)) return static_cast<int>(i);
  }
  return -1;
}

TempDir::TempDir() {
  char tmpl[] = "/tmp/weft-topo-test-XXXXXX";
  char* dir = mkdtemp(tmpl);
  if (dir) path_ = dir;
}

TempDir::~TempDir() {
  if (!path_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
}

std::string TempDir::file(const std::string& name, const std::string& text) const {
  std::string p = path_ + "/" + name;
  std::filesystem::create_directories(std::filesystem::path(p).parent_path());
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

}  // namespace weft::topo::test
