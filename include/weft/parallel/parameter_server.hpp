// ParameterServer: data parallelism through server ranks (Li et al. 2014; BytePS colocates the
// servers with the workers, as here). Every rank computes on all the parameters; ranks 0 to
// servers-1 also serve: the parameters are laid out in buckets (buckets.hpp), bucket b belongs
// to server b % servers, which alone keeps its optimizer state. A bucket whose gradients are
// all ready is reduced (an average) to its server on a stream, overlapping the rest of the
// backward pass; step() waits, each server updates its buckets with Adam, and broadcasts them.
// Float32.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "weft/parallel/adam.hpp"
#include "weft/parallel/buckets.hpp"
#include "weft/parallel/memory.hpp"
#include "weft/weft.hpp"

namespace weft::parallel {

class ParameterServer {
 public:
  // Collective over `comm` (which must outlive it), as are markReady() and step(). Throws
  // weft::Error for servers outside 1..comm.size(), and as DataParallel does for bad or
  // differing layouts.
  ParameterServer(Comm& comm, int servers, std::vector<size_t> counts, size_t bucketBytes,
                  const AdamConfig& adam, MemoryLedger& ledger);
  ~ParameterServer();
  ParameterServer(const ParameterServer&) = delete;
  ParameterServer& operator=(const ParameterServer&) = delete;

  // Parameter `param`, to read, and before the first step to set alike on every rank.
  std::span<float> param(size_t param);
  // Its gradient, for the backward pass to write before markReady(param).
  std::span<float> grad(size_t param);
  void markReady(size_t param);
  // Waits for the reductions; the servers update their buckets and broadcast them. Throws if a
  // gradient was not marked ready this step.
  void step();

  const BucketLayout& layout() const { return layout_; }
  int serverOf(size_t bucket) const { return static_cast<int>(bucket % servers_); }

 private:
  float* at(const Buffer& b, size_t element) const { return b.as<float>().data() + element; }
  void checkParam(size_t param) const;

  Comm& comm_;
  size_t servers_;
  int rank_;
  std::vector<size_t> counts_;
  AdamConfig adam_;
  int64_t steps_ = 0;
  BucketLayout layout_;
  BucketReadiness readiness_;
  Buffer params_;
  Buffer grads_;
  // A server's Adam moments: m then v of its buckets, packed in bucket order.
  Buffer moments_;
  std::vector<size_t> momentOffset_;  // per bucket this rank serves
  size_t served_ = 0;                 // elements this rank serves
  Stream stream_;
};

}  // namespace weft::parallel
