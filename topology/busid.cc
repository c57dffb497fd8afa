#include "topology/busid.h"

#include <cctype>
#include <cstdio>

namespace weft::topo {
namespace {

bool parseHex(std::string_view text, size_t maxDigits, unsigned long* out) {
  if (text.empty() || text.size() > maxDigits) return false;
  unsigned long v = 0;
  for (char c : text) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
    v = v * 16 +
        static_cast<unsigned long>(std::isdigit(static_cast<unsigned char>(c))
                                       ? c - '0'
                                       : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10);
  }
  *out = v;
  return true;
}

}  // namespace

std::optional<std::string> normalizeBusId(std::string_view text) {
  // Split "[domain:]bus:device.function".
  size_t dot = text.rfind('.');
  if (dot == std::string_view::npos) return std::nullopt;
  size_t colon2 = text.rfind(':', dot);
  if (colon2 == std::string_view::npos) return std::nullopt;
  size_t colon1 = colon2 == 0 ? std::string_view::npos : text.rfind(':', colon2 - 1);
  std::string_view domainText = colon1 == std::string_view::npos ? "0" : text.substr(0, colon1);
  std::string_view busText = colon1 == std::string_view::npos
                                 ? text.substr(0, colon2)
                                 : text.substr(colon1 + 1, colon2 - colon1 - 1);
  std::string_view devText = text.substr(colon2 + 1, dot - colon2 - 1);
  std::string_view fnText = text.substr(dot + 1);
  unsigned long domain, bus, dev, fn;
  if (!parseHex(domainText, 8, &domain) || !parseHex(busText, 2, &bus) ||
      !parseHex(devText, 2, &dev) || !parseHex(fnText, 1, &fn)) {
    return std::nullopt;
  }
  if (domain > 0xffff || dev > 0x1f || fn > 7) return std::nullopt;
  char out[16];
  snprintf(out, sizeof(out), "%04lx:%02lx:%02lx.%lx", domain, bus, dev, fn);
  return std::string(out);
}

}  // namespace weft::topo
