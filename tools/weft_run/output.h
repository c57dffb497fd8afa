// Output multiplexing: each rank's stdout and stderr arrive on pipes and leave as whole lines.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace weft::run {

// Splits one stream into lines and hands each complete line, prefix first and newline last, to
// the sink in one piece, so lines of different ranks never interleave mid-line.
class LinePrefixer {
 public:
  // Returns false once the output is gone (a closed pipe): there is no point in more.
  using Sink = std::function<bool(std::string_view)>;
  // A line longer than this is passed on in pieces, so a rank that never prints a newline
  // cannot grow the buffer without bound.
  static constexpr size_t kMaxLine = 64 * 1024;

  LinePrefixer(std::string prefix, Sink sink)
      : prefix_(std::move(prefix)), sink_(std::move(sink)) {}

  // Both return false once the sink refused a line.
  bool feed(std::string_view bytes);
  // Passes on a partial last line, ending it with a newline.
  bool finish();

 private:
  bool emit(std::string_view text);

  std::string prefix_;
  Sink sink_;
  std::string pending_;  // the start of a line that has no newline yet
  std::string line_;     // reused to assemble prefix + text
};

// A sink that writes to a file descriptor, retrying short writes; false on an error such as
// EPIPE (weft-run's stdout piped into `head`).
LinePrefixer::Sink fdSink(int fd);

// "[rank] ", or "" when prefixing is off.
std::string rankPrefix(int rank, bool enabled);

}  // namespace weft::run
