// Small text helpers for parsing settings and files.
#pragma once

#include <string_view>
#include <vector>

namespace weft {

// Without leading and trailing white space.
std::string_view trim(std::string_view text);
// The pieces between separators, empty ones included ("a,,b" gives "a", "", "b").
std::vector<std::string_view> split(std::string_view text, char sep);

}  // namespace weft
