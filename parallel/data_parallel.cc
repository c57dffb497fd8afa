#include "weft/parallel/data_parallel.hpp"

#include <cstdint>
#include <string>

namespace weft::parallel {
namespace {

[[noreturn]] void fail(weftResult_t code, const std::string& message) {
  throw Error(code, message);
}

// What every rank must agree on, for the check at construction.
struct Layout {
  uint64_t hash = 1469598103934665603ull;  // FNV-1a over the fields below
  uint64_t params = 0;
  uint64_t elements = 0;
  uint64_t bucketBytes = 0;
  uint64_t type = 0;

  void mix(uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      hash ^= (v >> (8 * i)) & 0xFF;
      hash *= 1099511628211ull;
    }
  }
};

}  // namespace

DataParallel::DataParallel(Comm& comm, weftDataType_t type, std::vector<size_t> counts,
                           size_t bucketBytes, MemoryLedger& ledger)
    : comm_(comm), type_(type), elemSize_(sizeOf(type)), counts_(std::move(counts)) {
  if (elemSize_ == 0) fail(weftInvalidArgument, "data parallel: unknown data type");
  if (bucketBytes == 0)
    fail(weftInvalidArgument, "data parallel: the bucket cap must be > 0 bytes");
  if (counts_.empty()) fail(weftInvalidArgument, "data parallel: no parameters");
  for (size_t p = 0; p < counts_.size(); ++p) {
    if (counts_[p] == 0) {
      fail(weftInvalidArgument, "data parallel: parameter " + std::to_string(p) + " is empty");
    }
  }
  checkSameLayoutEverywhere(bucketBytes);
  // The flat buffer holds the parameters last first; a bucket closes before the parameter that
  // would take it past the cap (a parameter larger than the cap is a bucket of its own).
  const size_t n = counts_.size();
  offsets_.resize(n);
  bucketOf_.resize(n);
  size_t at = 0;
  for (size_t k = n; k-- > 0;) {
    const size_t bytes = counts_[k] * elemSize_;
    if (buckets_.empty() || (buckets_.back().elements > 0 &&
                             buckets_.back().elements * elemSize_ + bytes > bucketBytes)) {
      buckets_.push_back(Bucket{at, 0, 0});
    }
    Bucket& b = buckets_.back();
    offsets_[k] = at;
    bucketOf_[k] = buckets_.size() - 1;
    b.elements += counts_[k];
    ++b.pending;
    at += counts_[k];
  }
  ready_.assign(n, false);
  grads_ = Buffer(at * elemSize_, MemoryKind::kGradients, ledger);
}

DataParallel::~DataParallel() {
  // Buckets may still be in flight on the stream, reading and writing the buffer.
  weftStreamSynchronize(stream_.get());
}

void DataParallel::checkSameLayoutEverywhere(size_t bucketBytes) const {
  Layout mine;
  mine.params = counts_.size();
  for (size_t c : counts_) {
    mine.elements += c;
    mine.mix(c);
  }
  mine.bucketBytes = bucketBytes;
  mine.type = static_cast<uint64_t>(type_);
  mine.mix(mine.bucketBytes);
  mine.mix(mine.type);
  std::vector<Layout> all(static_cast<size_t>(comm_.size()));
  static_assert(sizeof(Layout) == 5 * sizeof(uint64_t));
  check(weftAllGather(&mine, all.data(), 5, weftUint64, comm_.get(), nullptr), comm_.get());
  for (size_t r = 0; r < all.size(); ++r) {
    const Layout& other = all[r];
    if (other.hash == mine.hash) continue;
    auto describe = [](size_t rank, const Layout& l) {
      return "rank " + std::to_string(rank) + " has " + std::to_string(l.params) +
             " parameters of " + std::to_string(l.elements) + " elements in all, type " +
             std::to_string(l.type) + ", buckets of " + std::to_string(l.bucketBytes) + " bytes";
    };
    fail(weftInvalidUsage, "data parallel: the ranks' parameter layouts differ: " +
                               describe(static_cast<size_t>(comm_.rank()), mine) + "; " +
                               describe(r, other) +
                               (other.params == mine.params && other.elements == mine.elements
                                    ? " (the same totals, split differently)"
                                    : ""));
  }
}

void* DataParallel::gradData(size_t param) const {
  if (param >= counts_.size()) {
    fail(weftInvalidArgument, "data parallel: no parameter " + std::to_string(param) +
                                  " (there are " + std::to_string(counts_.size()) + ")");
  }
  return static_cast<char*>(grads_.data()) + offsets_[param] * elemSize_;
}

void DataParallel::checkType(weftDataType_t type) const {
  if (type != type_) {
    fail(weftInvalidArgument, "data parallel: gradients are of type " + std::to_string(type_) +
                                  ", not " + std::to_string(type));
  }
}

std::vector<size_t> DataParallel::bucketParams(size_t b) const {
  std::vector<size_t> out;
  for (size_t p = 0; p < counts_.size(); ++p) {
    if (bucketOf_[p] == b) out.push_back(p);
  }
  return out;
}

void DataParallel::markReady(size_t param) {
  gradData(param);  // checks the index
  if (ready_[param]) {
    fail(weftInvalidUsage, "data parallel: the gradient of parameter " + std::to_string(param) +
                               " was marked ready twice in one step");
  }
  ready_[param] = true;
  --buckets_[bucketOf_[param]].pending;
  startReadyBuckets();
}

void DataParallel::startReadyBuckets() {
  while (nextBucket_ < buckets_.size() && buckets_[nextBucket_].pending == 0) {
    const Bucket& b = buckets_[nextBucket_++];
    void* data = static_cast<char*>(grads_.data()) + b.firstElement * elemSize_;
    check(weftAllReduce(data, data, b.elements, type_, weftAvg, comm_.get(), stream_.get()),
          comm_.get());
  }
}

void DataParallel::finish() {
  const weftResult_t waited = weftStreamSynchronize(stream_.get());
  std::string missing;
  for (size_t p = 0; p < counts_.size(); ++p) {
    if (!ready_[p]) missing += (missing.empty() ? "" : ", ") + std::to_string(p);
  }
  // The next step starts afresh, also after an error.
  ready_.assign(counts_.size(), false);
  for (Bucket& b : buckets_)
    b.pending = 0;
  for (size_t p = 0; p < counts_.size(); ++p)
    ++buckets_[bucketOf_[p]].pending;
  nextBucket_ = 0;
  check(waited, comm_.get());
  if (!missing.empty()) {
    fail(weftInvalidUsage, "data parallel: finish() before the gradients of parameters " + missing +
                               " were marked ready (their buckets were not reduced)");
  }
}

}  // namespace weft::parallel
