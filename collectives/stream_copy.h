// A copy whose stores bypass the cache, for outputs too large to stay in it: an ordinary store
// first reads the line it writes (read for ownership), so a streaming copy moves a third less
// memory traffic. For data the caller reads again soon, memcpy is faster.
#pragma once

#include <cstddef>

namespace weft {

// memcpy(dst, src, bytes) with non-temporal stores on x86-64; a plain memcpy elsewhere. The regions
// must not overlap. Ends with a store fence, so the data is ordered before whatever the caller
// publishes next.
void streamCopy(void* dst, const void* src, size_t bytes);

// streamCopy where `stream`, else memcpy: how staged and mapped collectives copy out.
void copyOut(void* dst, const void* src, size_t bytes, bool stream);

}  // namespace weft
