// Strategy: where one rank keeps the parameters, gradients and optimizer state, and what a
// training step communicates: plain data parallelism (gradient buckets all-reduced, every rank a
// full Adam step) or ZeRO stage 1-3 (weft/parallel/zero.hpp), in float32 or, with float32 master
// weights, bfloat16 or float16 (weft/parallel/precision.hpp). The model computes in float32:
// it sees each unit's parameters and gradients as float spans, which the strategy converts from
// and to the 16-bit type.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "tools/weft_train/options.h"
#include "weft/parallel/adam.hpp"
#include "weft/parallel/memory.hpp"
#include "weft/parallel/precision.hpp"
#include "weft/weft.hpp"

namespace weft_train {

using weft::parallel::AdamConfig;
using weft::parallel::MemoryLedger;
using weft::parallel::PrecisionConfig;

class Strategy {
 public:
  // As the options say (--zero, --offload, --param-server, --bucket-bytes); counts are the
  // parameter tensors' lengths and units their units. Collective over comm, as are step() and
  // allParameters(). The options go together (parseOptions checks).
  static std::unique_ptr<Strategy> create(const Options& options, weft::Comm& comm,
                                          const std::vector<size_t>& counts,
                                          const std::vector<size_t>& units, const AdamConfig& adam,
                                          const PrecisionConfig& precision, MemoryLedger& ledger);
  virtual ~Strategy() = default;

  // Sets every parameter (the same values on every rank).
  virtual void setParameters(const std::vector<std::vector<float>>& values) = 0;
  // Unit u's parameters for its forward (units in order), and the end of that forward.
  std::vector<std::span<const float>> forwardParams(size_t unit);
  virtual void forwardDone(size_t /*unit*/) {}
  // Unit u's parameters and gradient spans for its backward (units in reverse order), and the
  // end of that backward: its gradients are written.
  std::vector<std::span<const float>> backwardParams(size_t unit);
  std::vector<std::span<float>> grads(size_t unit);
  void backwardDone(size_t unit);
  // What the loss is multiplied by in the backward pass.
  virtual float lossScale() const = 0;
  // Finishes the gradients' reduction and updates the parameters; false if the step was
  // skipped (gradients that overflowed).
  virtual bool step() = 0;
  // Every parameter, in order, on every rank.
  virtual std::vector<float> allParameters() = 0;

 protected:
  Strategy(weftDataType_t type, std::vector<size_t> counts, std::vector<size_t> units);
  // The parameter tensors of unit u.
  std::vector<size_t> tensorsOf(size_t unit) const;
  // Where tensor i's parameters and gradient are, in the strategy's type, for this unit's
  // forward or backward; and that the unit's gradients are written.
  virtual const void* paramData(size_t tensor) = 0;
  virtual void* gradData(size_t tensor) = 0;
  virtual void gathering(size_t /*unit*/, bool /*backward*/) {}
  virtual void gradsWritten(size_t unit) = 0;

  weftDataType_t type_;
  std::vector<size_t> counts_;
  std::vector<size_t> units_;

 private:
  std::vector<std::span<const float>> paramsOf(size_t unit);

  // Float32 copies of a unit's parameters and gradients, for a 16-bit type.
  std::vector<std::vector<float>> paramWork_, gradWork_;
};

}  // namespace weft_train
