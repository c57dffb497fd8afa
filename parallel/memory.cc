#include "weft/parallel/memory.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace weft::parallel {
namespace {

constexpr size_t kHostAlignment = 64;  // a cache line

}  // namespace

void MemoryLedger::add(MemoryKind kind, size_t bytes) {
  const size_t i = index(kind);
  current_[i] += bytes;
  peak_[i] = std::max(peak_[i], current_[i]);
}

void MemoryLedger::release(MemoryKind kind, size_t bytes) {
  current_[index(kind)] -= bytes;
}

Buffer::Buffer(size_t bytes, MemoryKind kind, MemoryLedger& ledger) : kind_(kind) {
  if (bytes == 0) return;
  if (kind == MemoryKind::kHostPool) {
    data_ = std::aligned_alloc(kHostAlignment,
                               (bytes + kHostAlignment - 1) / kHostAlignment * kHostAlignment);
    if (data_ == nullptr) throw Error(weftSystemError, "out of memory for the host pool");
  } else {
    check(weftMemAlloc(&data_, bytes));
  }
  std::memset(data_, 0, bytes);
  bytes_ = bytes;
  ledger_ = &ledger;
  ledger_->add(kind_, bytes_);
}

void Buffer::reset() {
  if (data_ == nullptr) return;
  if (kind_ == MemoryKind::kHostPool) {
    std::free(data_);
  } else {
    weftMemFree(data_);
  }
  ledger_->release(kind_, bytes_);
  data_ = nullptr;
  bytes_ = 0;
  ledger_ = nullptr;
}

}  // namespace weft::parallel
