#include "transports/link.h"

#include <algorithm>
#include <cstring>

namespace weft {

Status Link::read(void* data, size_t bytes, size_t* got) {
  *got = 0;
  char* out = static_cast<char*>(data);
  while (*got < bytes) {
    const void* view = nullptr;
    size_t avail = 0;
    WEFT_RETURN_IF_ERROR(peek(&view, &avail));
    if (avail == 0) break;
    size_t n = std::min(avail, bytes - *got);
    memcpy(out + *got, view, n);
    consume(n);
    *got += n;
  }
  return okStatus();
}

Status farewellError(int peer, const Farewell& farewell, const Status& plain) {
  if (farewell.origin < 0) return plain;
  if (peer < 0) {
    return errorf(weftRemoteError, "the peer closed the link after rank %d failed: %s",
                  farewell.origin, farewell.message.c_str());
  }
  if (farewell.origin == peer) {
    return errorf(weftRemoteError, "rank %d failed: %s", peer, farewell.message.c_str());
  }
  return errorf(weftRemoteError, "rank %d closed the link after rank %d failed: %s", peer,
                farewell.origin, farewell.message.c_str());
}

}  // namespace weft
