// Runs the ranks of one launch to completion: output, signals, failures, timeout.
#pragma once

#include "tools/weft_run/options.h"

namespace weft::run {

// Exit codes of weft-run besides a rank's own code (or 128 + the signal that killed it).
constexpr int kExitTimeout = 124;    // --timeout expired, as timeout(1)
constexpr int kExitCannotRun = 127;  // the program could not be started, as the shell

// Starts the ranks and returns weft-run's exit code: 0 if all ranks succeeded, else the first
// failing rank's exit code, or 128 + signal. Never blocks on anything but poll().
int launch(const Options& options);

}  // namespace weft::run
