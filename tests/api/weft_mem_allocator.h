// An allocator for test containers: memory from weftMemAlloc while weftMemAllocInForce() is true
// as a container is made, from the heap otherwise, so that one test body can run with buffers
// of either kind (mapped collectives take only the first).
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <new>

#include "weft/weft.h"

namespace weft::test {

inline bool& weftMemAllocInForce() {
  static bool on = false;
  return on;
}

template <typename T>
struct WeftMemAllocator {
  using value_type = T;
  WeftMemAllocator() = default;
  template <typename U>
  WeftMemAllocator(const WeftMemAllocator<U>& other) : shared(other.shared) {}  // NOLINT
  T* allocate(size_t n) {
    if (!shared) return static_cast<T*>(::operator new(n * sizeof(T)));
    void* p = nullptr;
    if (weftMemAlloc(&p, n * sizeof(T)) != weftSuccess) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t) {
    if (!shared) {
      ::operator delete(p);
    } else {
      EXPECT_EQ(weftMemFree(p), weftSuccess) << weftGetLastError(nullptr);
    }
  }
  bool operator==(const WeftMemAllocator& other) const { return shared == other.shared; }
  bool shared = weftMemAllocInForce();
};

}  // namespace weft::test
