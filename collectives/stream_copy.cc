#include "collectives/stream_copy.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace weft {

#if defined(__x86_64__)

// SSE2 is part of x86-64, so this needs no dispatch; wider stores write the same lines.
void streamCopy(void* dst, const void* src, size_t bytes) {
  constexpr size_t kStore = 16;
  constexpr size_t kLine = 64;
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  // Up to dst's first 16-byte boundary with memcpy, then whole lines' worth of streaming
  // stores, then the tail with memcpy.
  const size_t head = std::min(bytes, (kStore - reinterpret_cast<uintptr_t>(d) % kStore) % kStore);
  memcpy(d, s, head);
  size_t done = head;
  for (; done + kLine <= bytes; done += kLine) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + done));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + done + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + done + 32));
    const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + done + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + done), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + done + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + done + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + done + 48), e);
  }
  memcpy(d + done, s + done, bytes - done);
  _mm_sfence();
}

#else

void streamCopy(void* dst, const void* src, size_t bytes) {
  memcpy(dst, src, bytes);
}

#endif

void copyOut(void* dst, const void* src, size_t bytes, bool stream) {
  if (stream) {
    streamCopy(dst, src, bytes);
  } else {
    memcpy(dst, src, bytes);
  }
}

}  // namespace weft
