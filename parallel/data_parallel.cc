#include "weft/parallel/data_parallel.hpp"

#include <cstdint>
#include <string>

#include "errors.h"  // the layer sees only include/ and itself

namespace weft::parallel {
namespace {

constexpr const char* kWho = "data parallel";

// What every rank must agree on.
struct Layout {
  uint64_t hash = 1469598103934665603ull;  // FNV-1a over the counts, cap, type and settings
  uint64_t params = 0;
  uint64_t elements = 0;
  uint64_t capBytes = 0;
  uint64_t type = 0;

  void mix(uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      hash ^= (v >> (8 * i)) & 0xFF;
      hash *= 1099511628211ull;
    }
  }
};

std::string describe(int rank, const Layout& l) {
  return "rank " + std::to_string(rank) + " has " + std::to_string(l.params) + " parameters of " +
         std::to_string(l.elements) + " elements in all, type " + std::to_string(l.type) +
         ", buckets of " + std::to_string(l.capBytes) + " bytes";
}

// The layout, checked first so that the ranks agree before any collective of the layer.
BucketLayout checkedLayout(Comm& comm, const std::vector<size_t>& counts, weftDataType_t type,
                           size_t capBytes) {
  if (sizeOf(type) == 0) fail(weftInvalidArgument, kWho, "unknown data type");
  return withContext(kWho, [&] {
    BucketLayout layout(counts, sizeOf(type), capBytes, 1);
    checkSameLayoutEverywhere(comm, counts, type, capBytes);
    return layout;
  });
}

}  // namespace

void checkSameLayoutEverywhere(Comm& comm, const std::vector<size_t>& counts, weftDataType_t type,
                               size_t capBytes, const std::vector<size_t>& settings) {
  Layout mine;
  mine.params = counts.size();
  for (size_t c : counts) {
    mine.elements += c;
    mine.mix(c);
  }
  mine.capBytes = capBytes;
  mine.type = static_cast<uint64_t>(type);
  mine.mix(mine.capBytes);
  mine.mix(mine.type);
  for (size_t v : settings)
    mine.mix(v);
  static_assert(sizeof(Layout) == 5 * sizeof(uint64_t));
  std::vector<Layout> all(static_cast<size_t>(comm.size()));
  check(weftAllGather(&mine, all.data(), 5, weftUint64, comm.get(), nullptr), comm.get());
  for (size_t r = 0; r < all.size(); ++r) {
    const Layout& other = all[r];
    if (other.hash == mine.hash) continue;
    const bool sameTotals = other.params == mine.params && other.elements == mine.elements;
    throw Error(weftInvalidUsage,
                "the ranks' parameter layouts differ: " + describe(comm.rank(), mine) + "; " +
                    describe(static_cast<int>(r), other) +
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
