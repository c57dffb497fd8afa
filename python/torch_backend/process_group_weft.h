// ProcessGroupWeft: torch.distributed's process group over one Weft communicator, for CPU
// tensors. The ranks meet through the c10d Store torch hands the group (rank 0 puts Weft's
// unique id there), so every init method torch has (env://, tcp://, file://, torchrun) works
// unchanged; each group, new_group's included, gets a communicator of its own that way.
//
// Written against torch 1.x's c10d::ProcessGroup. Torch 2.x splits it into ProcessGroup and
// c10d::Backend with the same per-op methods: the port is the base class and the registration
// (module.cc), not the ops.
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "python/torch_backend/op_queue.h"
#include "python/torch_backend/work.h"
#include "weft/weft.h"

namespace weft::torch_backend {

class ProcessGroupWeft : public c10d::ProcessGroup {
 public:
  // Blocks until every rank of the group has joined, or `timeout` (which also becomes every
  // later call's deadline, as WEFT_TIMEOUT) has passed.
  ProcessGroupWeft(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                   std::chrono::milliseconds timeout);
  ~ProcessGroupWeft() override;

  const std::string getBackendName() const override { return "weft"; }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(
      std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors,
                                        const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(
      std::vector<std::vector<at::Tensor>>& outputLists, std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs,
                                        std::vector<at::Tensor>& inputs,
                                        const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs,
                                         std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(
      at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& outputSplits,
                                               std::vector<int64_t>& inputSplits,
                                               const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs,
                                          std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dstRank,
                                      int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int srcRank,
                                      int tag) override;
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor>& tensors, int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override;
  // Through the store, so that it names the ranks that did not come within the timeout.
  void monitoredBarrier(const c10d::BarrierOptions& opts, bool waitAllRanks) override;
  // Waits until every call made so far has run and its work has been let go of by the worker.
  void drain() { queue_->drain(); }
  // drain() on every weft group alive: weft/torch.py calls it as Python exits, so that no worker
  // lets go of a Python object (a future's callback) while the interpreter is being torn down.
  static void drainAll();

  void setSequenceNumberForGroup() override { sequence_ = 0; }
  uint64_t getSequenceNumberForGroup() override { return sequence_; }

 private:
  // Queues `issue` (and `done` after it) on the worker; the work completes with `outputs`.
  c10::intrusive_ptr<c10d::Work> enqueue(c10d::OpType type, const char* title,
                                         std::vector<at::Tensor> outputs,
                                         std::function<void()> issue,
                                         std::function<void()> done = {},
                                         bool pointToPoint = false);
  // Makes `calls` (Weft sends and receives, stopping at the first failure) as one group, and
  // throws the first failure, theirs or the group's.
  void inGroup(const char* what, const std::function<weftResult_t()>& calls);
  // Throws Weft's error for `what`, with the communicator's last message.
  void check(weftResult_t result, const char* what) const;

  c10::intrusive_ptr<c10d::Store> store_;
  std::chrono::milliseconds timeout_;
  weftComm_t comm_ = nullptr;
  uint64_t sequence_ = 0;
  uint64_t monitoredBarriers_ = 0;
  std::unique_ptr<OpQueue> queue_;
};

}  // namespace weft::torch_backend
