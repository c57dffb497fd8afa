// Small text helpers for parsing settings and files.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace weft {

// Without leading and trailing white space.
std::string_view trim(std::string_view text);
// Whether a and b are the same but for the case of ASCII letters.
bool equalsIgnoreCase(std::string_view a, std::string_view b);
// The pieces between separators, empty ones included ("a,,b" gives "a", "", "b").
std::vector<std::string_view> split(std::string_view text, char sep);
// A file name pattern with %h replaced by the host name and %p by the pid, as in
// NCCL_DEBUG_FILE.
std::string expandFilePattern(std::string_view pattern);

}  // namespace weft
