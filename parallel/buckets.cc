#include "weft/parallel/buckets.hpp"

#include "weft/weft.hpp"

namespace weft::parallel {
namespace {

[[noreturn]] void fail(weftResult_t code, const std::string& message) {
  throw Error(code, message);
}

}  // namespace

BucketLayout::BucketLayout(const std::vector<size_t>& counts, size_t elemSize, size_t capBytes,
                           size_t multiple, const std::vector<size_t>& units)
    : unitOf(units.empty() ? std::vector<size_t>(counts.size(), 0) : units) {
  if (capBytes == 0) fail(weftInvalidArgument, "the bucket cap must be > 0 bytes");
  if (multiple == 0) fail(weftInvalidArgument, "buckets must split into at least one slice");
  if (counts.empty()) fail(weftInvalidArgument, "no parameters");
  const size_t n = counts.size();
  if (unitOf.size() != n || unitOf[0] != 0) {
    fail(weftInvalidArgument, "units: one per parameter, the first parameter's unit 0");
  }
  for (size_t k = 1; k < n; ++k) {
    if (unitOf[k] != unitOf[k - 1] && unitOf[k] != unitOf[k - 1] + 1) {
      fail(weftInvalidArgument,
           "units must be runs of consecutive parameters numbered up by one: "
           "parameter " +
               std::to_string(k) + " is in unit " + std::to_string(unitOf[k]) + " after unit " +
               std::to_string(unitOf[k - 1]));
    }
  }
  offsets.resize(n);
  bucketOf.resize(n);
  size_t used = 0;  // elements of parameters in the open bucket
  auto close = [&] {
    Bucket& b = buckets.back();
    b.elements = (used + multiple - 1) / multiple * multiple;
    total = b.first + b.elements;
  };
  for (size_t k = n; k-- > 0;) {
    if (counts[k] == 0) fail(weftInvalidArgument, "parameter " + std::to_string(k) + " is empty");
    if (buckets.empty() || buckets.back().unit != unitOf[k] ||
        (used > 0 && (used + counts[k]) * elemSize > capBytes)) {
      if (!buckets.empty()) close();
      buckets.push_back(Bucket{total, 0, 0, unitOf[k]});
      used = 0;
    }
    offsets[k] = buckets.back().first + used;
    bucketOf[k] = buckets.size() - 1;
    ++buckets.back().params;
    used += counts[k];
  }
  close();
}

BucketReadiness::BucketReadiness(const BucketLayout& layout)
    : layout_(layout), ready_(layout.offsets.size(), false) {
  endStep();
}

std::vector<size_t> BucketReadiness::markReady(size_t param) {
  if (param >= ready_.size()) {
    fail(weftInvalidArgument, "no parameter " + std::to_string(param) + " (there are " +
                                  std::to_string(ready_.size()) + ")");
  }
  if (ready_[param]) {
    fail(weftInvalidUsage, "the gradient of parameter " + std::to_string(param) +
                               " was marked ready twice in one step");
  }
  ready_[param] = true;
  --pending_[layout_.bucketOf[param]];
  std::vector<size_t> start;
  while (next_ < pending_.size() && pending_[next_] == 0)
    start.push_back(next_++);
  return start;
}

std::string BucketReadiness::endStep() {
  std::string missing;
  for (size_t p = 0; p < ready_.size(); ++p) {
    if (!ready_[p]) missing += (missing.empty() ? "" : ", ") + std::to_string(p);
  }
  ready_.assign(ready_.size(), false);
  pending_.clear();
  for (const BucketLayout::Bucket& b : layout_.buckets)
    pending_.push_back(b.params);
  next_ = 0;
  return missing;
}

}  // namespace weft::parallel
