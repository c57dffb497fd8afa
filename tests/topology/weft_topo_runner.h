// Runs the weft-topo binary (WEFT_TOPO_PATH, set by CMake) as a user would, for the tool's tests.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace weft::topo::test {

struct Result {
  int code = -1;
  std::string out;  // stdout and stderr together
};

// Runs weft-topo with `args` (after a shell prefix such as "WEFT_TOPO_FILE=x" or "cd DIR &&").
inline Result weftTopo(const std::string& args, const std::string& env = "") {
  std::string cmd = env + (env.empty() ? "" : " ") + WEFT_TOPO_PATH + " " + args + " 2>&1";
  Result r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0)
    r.out.append(buf.data(), n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace weft::topo::test
