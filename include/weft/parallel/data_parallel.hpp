// DataParallel: gradient buckets for data parallelism, as DDP's reducer. The caller gives its
// parameters' element counts once; the layer holds one flat gradient buffer in which each
// parameter's gradient is a span that the backward pass writes. Buckets take the parameters in
// reverse order (the order a backward pass produces their gradients) up to a byte cap, and each
// bucket is one contiguous range of the buffer. Once every gradient of a bucket is marked
// ready, its all-reduce (an average) starts on the layer's stream, so that it overlaps the rest
// of the backward pass; buckets start in bucket order on every rank, whatever order the
// gradients become ready in. finish() waits for them all.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "weft/parallel/buckets.hpp"
#include "weft/parallel/memory.hpp"
#include "weft/weft.hpp"

namespace weft::parallel {

class DataParallel {
 public:
  // Collective over `comm` (which must outlive it): the ranks check that they all gave the same
  // counts, type and cap, and throw weft::Error naming the difference otherwise. A cap of 0,
  // no parameters or a parameter of 0 elements are invalid arguments.
  DataParallel(Comm& comm, weftDataType_t type, std::vector<size_t> counts, size_t bucketBytes,
               MemoryLedger& ledger);
  ~DataParallel();
  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

  // Parameter `param`'s gradient (T must be the layer's type).
  template <typename T>
  std::span<T> grad(size_t param) {
    checkType(dataTypeOf<T>());
    return {static_cast<T*>(gradData(param)), counts_.at(param)};
  }
  // The whole gradient buffer, parameters in reverse order.
  template <typename T>
  std::span<T> flatGrads() {
    checkType(dataTypeOf<T>());
    return grads_.as<T>();
  }

  // The same untyped, for callers that convert by type().
  void* gradData(size_t param) const;
  weftDataType_t type() const { return type_; }
  // The gradient of `param` is complete for this step; may start buckets' all-reduces.
  void markReady(size_t param);
  // Waits until every bucket's all-reduce is done: the gradients then hold the average over the
  // ranks. Throws if a gradient was not marked ready this step; readies reset for the next.
  void finish();

  const BucketLayout& layout() const { return layout_; }

 private:
  void checkType(weftDataType_t type) const;

  Comm& comm_;
  weftDataType_t type_;
  size_t elemSize_;
  std::vector<size_t> counts_;
  BucketLayout layout_;
  BucketReadiness readiness_;
  Buffer grads_;
  Stream stream_;
};

}  // namespace weft::parallel
