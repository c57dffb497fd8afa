#include "weft/parallel/data_parallel.hpp"

#include <string>

#include "agree.h"
#include "errors.h"  // the layer sees only include/ and itself
#include "step_end.h"

namespace weft::parallel {
namespace {

constexpr const char* kWho = "data parallel";

}  // namespace

DataParallel::DataParallel(Comm& comm, weftDataType_t type, std::vector<size_t> counts,
                           size_t bucketBytes, MemoryLedger& ledger)
    : comm_(comm),
      type_(type),
      elemSize_(sizeOf(type)),
      counts_(std::move(counts)),
      layout_(withContext(
          kWho, [&] { return agreedLayout(comm, counts_, type, bucketBytes, 1, {}, {}); })),
      readiness_(layout_),
      grads_(layout_.total * elemSize_, MemoryKind::kGradients, ledger) {}

DataParallel::~DataParallel() {
  // Buckets may still be in flight on the stream, reading and writing the buffer.
  weftStreamSynchronize(stream_.get());
}

void* DataParallel::gradData(size_t param) const {
  if (param >= counts_.size()) {
    fail(weftInvalidArgument, kWho,
         "no parameter " + std::to_string(param) + " (there are " + std::to_string(counts_.size()) +
             ")");
  }
  return static_cast<char*>(grads_.data()) + layout_.offsets[param] * elemSize_;
}

void DataParallel::checkType(weftDataType_t type) const {
  if (type != type_) {
    fail(weftInvalidArgument, kWho,
         "gradients are of type " + std::to_string(type_) + ", not " + std::to_string(type));
  }
}

void DataParallel::markReady(size_t param) {
  for (size_t b : withContext(kWho, [&] { return readiness_.markReady(param); })) {
    const BucketLayout::Bucket& bucket = layout_.buckets[b];
    void* data = static_cast<char*>(grads_.data()) + bucket.first * elemSize_;
    check(weftAllReduce(data, data, bucket.elements, type_, weftAvg, comm_.get(), stream_.get()),
          comm_.get());
  }
}

void DataParallel::finish() {
  endReductions(readiness_, weftStreamSynchronize(stream_.get()), comm_, kWho, "finish()");
}

}  // namespace weft::parallel
