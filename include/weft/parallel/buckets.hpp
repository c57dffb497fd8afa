// Buckets: how the training layer lays parameters out in one flat buffer and groups them for
// communication, and which buckets may start as gradients become ready.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace weft::parallel {

// Parameters last first (the order a backward pass produces their gradients), grouped into
// buckets of consecutive parameters up to a byte cap (a parameter larger than the cap is a
// bucket of its own). Each bucket is one range of the flat buffer, its length rounded up to a
// multiple of `multiple` elements with padding after its parameters, so that it splits into
// equal slices (one per rank, for a reduce-scatter).
struct BucketLayout {
  struct Bucket {
    size_t first = 0;     // element offset in the flat buffer
    size_t elements = 0;  // padding included
    size_t params = 0;    // how many parameters it holds
    size_t unit = 0;
  };
  std::vector<size_t> offsets;   // each parameter's element offset
  std::vector<size_t> bucketOf;  // each parameter's bucket
  std::vector<size_t> unitOf;    // each parameter's unit (all 0 without units)
  std::vector<Bucket> buckets;
  size_t total = 0;  // elements, padding included

  // unitOf, if not empty, gives each parameter's unit (units of consecutive parameters,
  // numbered up from 0): a bucket then never spans two units. Throws weft::Error
  // (weftInvalidArgument) for no parameters, an empty one, a cap or multiple of 0, or units
  // that are not runs of consecutive parameters.
  BucketLayout(const std::vector<size_t>& counts, size_t elemSize, size_t capBytes, size_t multiple,
               const std::vector<size_t>& unitOf = {});
};

// Tracks one step's ready gradients: buckets become startable in bucket order only, so every
// rank starts the same collectives in the same order whatever order its gradients come in.
class BucketReadiness {
 public:
  explicit BucketReadiness(const BucketLayout& layout);
  // Marks parameter `param` ready; returns the buckets that may start now, in order. Throws for
  // an unknown parameter or one marked twice in a step.
  std::vector<size_t> markReady(size_t param);
  // The parameters not marked ready this step ("1, 4"), empty if none; starts the next step.
  std::string endStep();

 private:
  const BucketLayout& layout_;
  std::vector<bool> ready_;
  std::vector<size_t> pending_;  // per bucket
  size_t next_ = 0;
};

}  // namespace weft::parallel
