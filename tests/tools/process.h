// Runs a command for a test: collects stdout and stderr, enforces a deadline so a test never
// hangs, and lets the test act (send a signal) when some output has appeared.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace weft::test {

struct ProcessResult {
  int status = -1;  // as waitpid reports it
  std::string out;
  std::string err;
  double seconds = 0;
  bool killedAtDeadline = false;

  bool exited() const;
  int exitCode() const;  // -1 unless exited()
};

// Called after each read with the output so far; return true once done with it.
using OnOutput = std::function<bool(pid_t pid, const std::string& out)>;

ProcessResult runProcess(const std::vector<std::string>& argv, double deadlineSeconds,
                         const OnOutput& onOutput = {});

// Lines of text, without their newlines.
std::vector<std::string> splitLines(const std::string& text);

}  // namespace weft::test
