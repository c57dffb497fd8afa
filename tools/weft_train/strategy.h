// Strategy: where one rank keeps the parameters, gradients and optimizer state, and what a
// training step communicates: plain data parallelism (gradient buckets all-reduced, every rank a
// full Adam step) or ZeRO stage 1-3 (weft/parallel/zero.hpp). The model sees each unit's
// parameters and gradients as spans either way.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "weft/parallel/adam.hpp"
#include "weft/parallel/memory.hpp"
#include "weft/weft.hpp"

namespace weft_train {

using weft::parallel::AdamConfig;
using weft::parallel::MemoryLedger;

class Strategy {
 public:
  // zero 0 is data parallelism; counts are the parameter tensors' lengths and units their units.
  // Collective over comm, as are step() and allParameters().
  static std::unique_ptr<Strategy> create(int zero, weft::Comm& comm,
                                          const std::vector<size_t>& counts,
                                          const std::vector<size_t>& units, size_t bucketBytes,
                                          const AdamConfig& adam, MemoryLedger& ledger);
  virtual ~Strategy() = default;

  // Sets every parameter (the same values on every rank).
  virtual void setParameters(const std::vector<std::vector<float>>& values) = 0;
  // Unit u's parameters for its forward (units in order) and, after it, done with them.
  virtual std::vector<std::span<const float>> forwardParams(size_t unit) = 0;
  virtual void forwardDone(size_t /*unit*/) {}
  // Unit u's parameters and gradient spans for its backward (units in reverse order); then its
  // gradients are written.
  virtual std::vector<std::span<const float>> backwardParams(size_t unit) = 0;
  virtual std::vector<std::span<float>> grads(size_t unit) = 0;
  virtual void backwardDone(size_t unit) = 0;
  // Finishes the gradients' reduction and updates the parameters.
  virtual void step() = 0;
  // Every parameter, in order, on every rank.
  virtual std::vector<float> allParameters() = 0;

 protected:
  Strategy(std::vector<size_t> counts, std::vector<size_t> units);
  // The parameter tensors of unit u.
  std::vector<size_t> tensorsOf(size_t unit) const;

  std::vector<size_t> counts_;
  std::vector<size_t> units_;
};

}  // namespace weft_train
