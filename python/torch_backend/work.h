// WeftWork: what a torch.distributed call on a weft process group returns. The call runs later
// on the group's worker (op_queue.h); wait() blocks until then and throws what it threw, and
// get_future() gives a future completed with the output tensors, as gloo's.
#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <exception>
#include <memory>
#include <vector>

namespace weft::torch_backend {

class WeftWork : public c10d::Work {
 public:
  WeftWork(int rank, c10d::OpType type, const char* title, std::vector<at::Tensor> outputs);

  std::vector<at::Tensor> result() override { return outputs_; }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }
  // A receive's sender, once the work is done; -1 for other work.
  int sourceRank() const override { return sourceRank_ ? *sourceRank_ : -1; }

  // From the worker, once the call is done: wakes wait() and completes the future.
  void complete(const std::exception_ptr& error);
  // `rank` is read only after wait(), so a receive from any source's worker may fill it in.
  void setSourceRank(std::shared_ptr<const int> rank) { sourceRank_ = std::move(rank); }

 private:
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  std::shared_ptr<const int> sourceRank_;
};

}  // namespace weft::torch_backend
