#include "src/base/text.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>

namespace weft {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    size_t end = text.find(sep, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

std::string expandFilePattern(std::string_view pattern) {
  std::string path;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char next = i + 1 < pattern.size() ? pattern[i + 1] : '\0';
    if (pattern[i] == '%' && next == 'p') {
      path += std::to_string(getpid());
      ++i;
    } else if (pattern[i] == '%' && next == 'h') {
      char host[256] = {};
      gethostname(host, sizeof(host) - 1);
      path += host;
      ++i;
    } else {
      path += pattern[i];
    }
  }
  return path;
}

}  // namespace weft
