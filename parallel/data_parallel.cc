#include "weft/parallel/data_parallel.hpp"

#include <cstdint>
#include <string>

#include "agree.h"
#include "errors.h"  // the layer sees only include/ and itself

namespace weft::parallel {
namespace {

constexpr const char* kWho = "data parallel";

// What every rank must agree on: the words the ranks all-gather.
struct Layout {
  uint64_t hash = 0;  // of the counts, cap, type and settings
  uint64_t params = 0;
  uint64_t elements = 0;
  uint64_t capBytes = 0;
  uint64_t type = 0;
};

std::string describe(size_t rank, const Layout& l) {
  return "rank " + std::to_string(rank) + " has " + std::to_string(l.params) + " parameters of " +
         std::to_string(l.elements) + " elements in all, type " + std::to_string(l.type) +
         ", buckets of " + std::to_string(l.capBytes) + " bytes";
}

// The layout. The ranks agree first, so that ranks with differing or invalid arguments all fail
// instead of some waiting for the others.
BucketLayout checkedLayout(Comm& comm, const std::vector<size_t>& counts, weftDataType_t type,
                           size_t capBytes) {
  return withContext(kWho, [&] {
    checkSameLayoutEverywhere(comm, counts, type, capBytes);
    if (sizeOf(type) == 0) throw Error(weftInvalidArgument, "unknown data type");
    return BucketLayout(counts, sizeOf(type), capBytes, 1);
  });
}

}  // namespace

void checkSameLayoutEverywhere(Comm& comm, const std::vector<size_t>& counts, weftDataType_t type,
                               size_t capBytes, const std::vector<size_t>& settings) {
  SettingsHash hash;
  Layout mine;
  mine.params = counts.size();
  for (size_t c : counts) {
    mine.elements += c;
    hash.mix(c);
  }
  mine.capBytes = capBytes;
  mine.type = static_cast<uint64_t>(type);
  hash.mix(mine.capBytes);
  hash.mix(mine.type);
  for (size_t v : settings)
    hash.mix(v);
  mine.hash = hash.value();
  const std::vector<uint64_t> all =
      allGatherWords(comm, {mine.hash, mine.params, mine.elements, mine.capBytes, mine.type});
  for (size_t r = 0; r < static_cast<size_t>(comm.size()); ++r) {
    const uint64_t* w = all.data() + 5 * r;
    const Layout other{w[0], w[1], w[2], w[3], w[4]};
    if (other.hash == mine.hash) continue;
    const bool sameTotals = other.params == mine.params && other.elements == mine.elements;
    throw Error(weftInvalidUsage,
                "the ranks' parameter layouts differ: " +
                    describe(static_cast<size_t>(comm.rank()), mine) + "; " + describe(r, other) +
                    (sameTotals ? " (the same totals: the split or other settings differ)" : ""));
  }
}

DataParallel::DataParallel(Comm& comm, weftDataType_t type, std::vector<size_t> counts,
                           size_t bucketBytes, MemoryLedger& ledger)
    : comm_(comm),
      type_(type),
      elemSize_(sizeOf(type)),
      counts_(std::move(counts)),
      layout_(checkedLayout(comm, counts_, type, bucketBytes)),
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
  const weftResult_t waited = weftStreamSynchronize(stream_.get());
  const std::string missing = readiness_.endStep();  // the next step starts whole either way
  check(waited, comm_.get());
  if (!missing.empty()) {
    fail(weftInvalidUsage, kWho,
         "finish() before the gradients of parameters " + missing +
             " were marked ready (their buckets were not reduced)");
  }
}

}  // namespace weft::parallel
