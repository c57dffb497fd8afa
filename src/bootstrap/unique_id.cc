#include "src/bootstrap/unique_id.h"

#include <sys/random.h>

#include <cerrno>
#include <cstring>

namespace weft {
namespace {

struct PackedId {
  uint32_t magic;
  uint16_t version;
  uint8_t rootByRank0;
  uint8_t reserved;
  WireAddress root;
  Secret secret;
  uint64_t commTag;
  uint64_t checksum;
};
static_assert(sizeof(PackedId) <= WEFT_UNIQUE_ID_BYTES);

uint64_t checksumOf(const PackedId& p) {
  // FNV-1a over everything before the checksum: catches ids that were truncated or garbled.
  const auto* bytes = reinterpret_cast<const uint8_t*>(&p);
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < offsetof(PackedId, checksum); ++i)
    h = (h ^ bytes[i]) * 1099511628211ull;
  return h;
}

}  // namespace

void encodeUniqueId(const UniqueIdData& data, weftUniqueId* id) {
  PackedId p{};
  p.magic = kBootstrapMagic;
  p.version = kBootstrapVersion;
  p.rootByRank0 = (data.rootStartedByRank0 ? 1 : 0) | (data.rootAtGivenAddress ? 2 : 0);
  p.root = data.root;
  p.secret = data.secret;
  p.commTag = data.commTag;
  p.checksum = checksumOf(p);
  memset(id->internal, 0, sizeof(id->internal));
  memcpy(id->internal, &p, sizeof(p));
}

Status decodeUniqueId(const weftUniqueId& id, UniqueIdData* data) {
  PackedId p;
  memcpy(&p, id.internal, sizeof(p));
  if (p.magic != kBootstrapMagic || p.checksum != checksumOf(p)) {
    return Status(weftInvalidArgument, "the unique id was not made by weftGetUniqueId");
  }
  if (p.version != kBootstrapVersion) {
    return errorf(weftInvalidArgument, "the unique id is from Weft bootstrap version %u, not %u",
                  p.version, kBootstrapVersion);
  }
  data->root = p.root;
  data->secret = p.secret;
  data->commTag = p.commTag;
  data->rootStartedByRank0 = (p.rootByRank0 & 1) != 0;
  data->rootAtGivenAddress = (p.rootByRank0 & 2) != 0;
  return okStatus();
}

Status randomBytes(void* out, size_t bytes) {
  auto* p = static_cast<uint8_t*>(out);
  while (bytes > 0) {
    ssize_t n = getrandom(p, bytes, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return systemError("getrandom", errno);
    }
    p += n;
    bytes -= static_cast<size_t>(n);
  }
  return okStatus();
}

}  // namespace weft
