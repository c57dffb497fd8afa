// Memory of the training layer: every buffer it holds comes from weftMemAlloc (so that
// collectives among ranks of one host may go mapped, straight between the buffers) and is
// counted in a ledger by kind, so that what each rank holds can be reported and checked.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <utility>

#include "weft/weft.hpp"

namespace weft::parallel {

// kHostPool: what offloading moves out of the memory the model computes in (master weights and
// optimizer state), allocated apart from the rest: plain host memory, which no collective
// touches (beside GPU buffers it would be pinned).
enum class MemoryKind { kParameters, kGradients, kOptimizerState, kBuckets, kGathered, kHostPool };
constexpr size_t kMemoryKinds = 6;

// Bytes held now and at most, by kind.
class MemoryLedger {
 public:
  void add(MemoryKind kind, size_t bytes);
  void release(MemoryKind kind, size_t bytes);
  size_t current(MemoryKind kind) const { return current_[index(kind)]; }
  size_t peak(MemoryKind kind) const { return peak_[index(kind)]; }

 private:
  static size_t index(MemoryKind kind) { return static_cast<size_t>(kind); }
  std::array<size_t, kMemoryKinds> current_{};
  std::array<size_t, kMemoryKinds> peak_{};
};

// Zeroed memory, counted in `ledger` (which must outlive it) while held: from weftMemAlloc, but
// for the host pool (plain aligned memory: collectives never touch it).
class Buffer {
 public:
  Buffer() = default;
  Buffer(size_t bytes, MemoryKind kind, MemoryLedger& ledger);
  ~Buffer() { reset(); }
  Buffer(Buffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        bytes_(std::exchange(other.bytes_, 0)),
        kind_(other.kind_),
        ledger_(std::exchange(other.ledger_, nullptr)) {}
  Buffer& operator=(Buffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(bytes_, other.bytes_);
    std::swap(kind_, other.kind_);
    std::swap(ledger_, other.ledger_);
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  // Frees the memory now; the buffer is then empty.
  void reset();
  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  template <typename T>
  std::span<T> as() const {
    return {static_cast<T*>(data_), bytes_ / sizeof(T)};
  }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
  MemoryKind kind_ = MemoryKind::kParameters;
  MemoryLedger* ledger_ = nullptr;
};

}  // namespace weft::parallel
