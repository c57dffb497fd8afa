#include "src/comm/agreed_settings.h"

#include <string_view>

namespace weft {
namespace {

// "name=value" lines back into pairs; a line without '=' keeps an empty value.
std::vector<std::pair<std::string, std::string>> decode(const Blob& blob) {
  std::vector<std::pair<std::string, std::string>> out;
  std::string_view text(reinterpret_cast<const char*>(blob.data()), blob.size());
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    const size_t eq = line.find('=');
    out.emplace_back(std::string(line.substr(0, eq)),
                     eq == std::string_view::npos ? "" : std::string(line.substr(eq + 1)));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
  }
  return out;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> agreedSettings(const CommConfig& c) {
  return {
      {"WEFT_TRANSPORT (config.netName)", c.transport},
      {"WEFT_NET", c.net},
      {"WEFT_NSOCKS_PERPEER (config.nSocketsPerPeer)", std::to_string(c.nSocketsPerPeer)},
      {"WEFT_ALGO", c.algo},
      {"WEFT_CHUNK_BYTES", std::to_string(c.chunkBytes)},
      {"WEFT_HIERARCHY", c.hierarchy},
      {"WEFT_CALIBRATE", c.calibrate ? "1" : "0"},
      {"WEFT_DIRECT_BYTES", std::to_string(c.directBytes)},
      {"WEFT_SHM_SINGLE_COPY", c.shmSingleCopy},
      {"WEFT_SHM_SINGLE_COPY_COLLS", c.shmSingleCopyColls},
      {"WEFT_SHM_SINGLE_COPY_BYTES", std::to_string(c.shmSingleCopyBytes)},
      {"WEFT_SHM_SINGLE_COPY_MAX_BYTES", std::to_string(c.shmSingleCopyMaxBytes)},
      {"WEFT_SHM_SINGLE_COPY_MAX_RANKS", std::to_string(c.shmSingleCopyMaxRanks)},
  };
}

Blob encodeSettings(const CommConfig& config) {
  std::string text;
  for (const auto& [name, value] : agreedSettings(config))
    text.append(name).append("=").append(value).append("\n");
  return Blob(text.begin(), text.end());
}

Status checkSettingsAgree(const std::vector<Blob>& all) {
  if (all.empty()) return okStatus();
  const auto first = decode(all[0]);
  for (size_t r = 1; r < all.size(); ++r) {
    const auto theirs = decode(all[r]);
    if (theirs.size() != first.size()) {
      return errorf(weftInvalidUsage,
                    "rank 0 and rank %zu run Weft versions that agree on different settings (%zu "
                    "against %zu)",
                    r, first.size(), theirs.size());
    }
    for (size_t i = 0; i < first.size(); ++i) {
      if (theirs[i] == first[i]) continue;
      if (theirs[i].first != first[i].first) {
        return errorf(weftInvalidUsage,
                      "rank 0 and rank %zu run Weft versions that agree on different settings "
                      "(%s against %s)",
                      r, first[i].first.c_str(), theirs[i].first.c_str());
      }
      return errorf(weftInvalidUsage,
                    "%s differs between ranks: rank 0 has '%s', rank %zu has '%s'; every rank of "
                    "a communicator must set it alike",
                    first[i].first.c_str(), first[i].second.c_str(), r, theirs[i].second.c_str());
    }
  }
  return okStatus();
}

}  // namespace weft
