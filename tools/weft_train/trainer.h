// Trainer: one rank's part of weft-train's loop (the text's batches, the model, the strategy)
// a step at a time; and, for the overlap report, a step's compute alone and its communication
// alone.
#pragma once

#include <memory>
#include <vector>

#include "tools/weft_train/model.h"
#include "tools/weft_train/options.h"
#include "tools/weft_train/strategy.h"
#include "tools/weft_train/text_data.h"
#include "weft/weft.hpp"

namespace weft_train {

class Trainer {
 public:
  // Collective over comm, as are step(), communicationOnly() and parameters().
  Trainer(const Options& options, weft::Comm& comm);

  const ModelShape& shape() const { return shape_; }
  const TextData& data() const { return data_; }
  const MemoryLedger& ledger() const { return ledger_; }
  // This rank's share of each global batch.
  int localExamples() const { return count_; }
  float lossScale() const { return strategy_->lossScale(); }

  // Training step `step` (from 1): this rank's mean loss over its share of the batch; *taken
  // says whether the optimizer stepped (not when gradients overflowed).
  double step(int step, bool* taken);
  // The model's forward and backward of step `step` alone, on float32 copies of every
  // parameter (parameters() split by tensor): no communication.
  void computeOnly(int step, const std::vector<std::vector<float>>& params);
  // A step's communication and update alone (gathers, reductions, the optimizer): no model
  // math, zero gradients; it changes the parameters. With idleMs, each unit's forward and
  // backward wait that long instead, as compute on an accelerator would, leaving the cores to
  // the collectives.
  void communicationOnly(double idleMs = 0);
  size_t units() const { return model_.units(); }
  // Every parameter tensor, as float32, on every rank.
  std::vector<std::vector<float>> parameters();

 private:
  const Options& o_;
  TextData data_;
  ModelShape shape_;
  MemoryLedger ledger_;
  std::unique_ptr<Strategy> strategy_;
  Model<float> model_;
  int first_ = 0, count_ = 0;
  float share_ = 1;  // what this rank's gradients are weighted by
  std::vector<int> contexts_, targets_;
};

}  // namespace weft_train
