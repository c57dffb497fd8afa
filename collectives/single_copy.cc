#include "collectives/single_copy.h"

#include <optional>

#include "collectives/algo_override.h"
#include "src/base/log.h"
#include "src/base/text.h"

namespace weft {
Status SingleCopyLimits::parse(const std::string& colls, size_t minBytes, size_t maxBytes,
                               int maxRanks, SingleCopyLimits* out) {
  SingleCopyLimits l;
  l.minBytes = minBytes;
  l.maxBytes = maxBytes;
  l.maxRanks = maxRanks;
  if (minBytes > 0 && maxBytes > 0 && maxBytes < minBytes) {
    WEFT_WARN(kInit,
              "WEFT_SHM_SINGLE_COPY_MAX_BYTES (%zu) is below WEFT_SHM_SINGLE_COPY_BYTES (%zu): "
              "nothing goes single copy",
              maxBytes, minBytes);
  }
  for (std::string_view piece : split(colls, ',')) {
    const std::string name(trim(piece));
    if (name.empty()) continue;
    std::optional<CollKind> kind = parseCollName(name);
    if (!kind || (*kind != CollKind::kAllGather && *kind != CollKind::kBroadcast &&
                  *kind != CollKind::kAllToAll)) {
      return errorf(weftInvalidArgument,
                    "WEFT_SHM_SINGLE_COPY_COLLS='%s': '%s' is not allgather, broadcast or alltoall",
                    colls.c_str(), name.c_str());
    }
    l.kinds |= 1u << static_cast<int>(*kind);
  }
  *out = l;
  return okStatus();
}

bool SingleCopyLimits::covers(const DirectGroup& g, const CollArgs& a, size_t elemSize) const {
  const size_t perPeer = a.count * elemSize;
  if (!g.singleCopy() || (kinds & (1u << static_cast<int>(a.kind))) == 0) return false;
  if (maxRanks > 0 && g.nranks() > maxRanks) return false;
  if (minBytes == 0 || perPeer < minBytes) return false;
  return maxBytes == 0 || perPeer <= maxBytes;
}

int singleCopyDecider(const CollArgs& a) {
  return a.kind == CollKind::kBroadcast ? (a.root + 1) % a.nranks : 0;
}

}  // namespace weft
