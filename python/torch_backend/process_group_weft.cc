#include "python/torch_backend/process_group_weft.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "python/torch_backend/dtypes.h"

namespace weft::torch_backend {
namespace {

const char* const kUniqueIdKey = "weft/unique_id";

// The groups alive, for drainAll().
std::mutex groupsMutex;
std::set<ProcessGroupWeft*>& groups() {
  static auto* all = new std::set<ProcessGroupWeft*>;  // never destroyed: no exit-order issue
  return *all;
}

void checkTensor(const at::Tensor& t, const char* op) {
  TORCH_CHECK(t.device().is_cpu(), "weft: ", op, " takes CPU tensors, not one on ", t.device());
  TORCH_CHECK(t.layout() == at::kStrided, "weft: ", op, " takes dense tensors, not ", t.layout());
}

const at::Tensor& theOne(const std::vector<at::Tensor>& tensors, const char* op) {
  TORCH_CHECK(tensors.size() == 1, "weft: ", op, " takes one tensor per process, not ",
              tensors.size());
  checkTensor(tensors[0], op);
  return tensors[0];
}

void checkLike(const at::Tensor& t, const at::Tensor& like, const char* op) {
  checkTensor(t, op);
  TORCH_CHECK(t.scalar_type() == like.scalar_type(), "weft: ", op, ": a tensor of type ",
              t.scalar_type(), " where ", like.scalar_type(), " was expected");
  TORCH_CHECK(t.numel() == like.numel(), "weft: ", op, ": a tensor of ", t.numel(),
              " elements where ", like.numel(), " were expected");
}

// An input and an output of one type: the tensor forms of all_gather, reduce_scatter and
// all_to_all.
void checkInOut(const at::Tensor& input, const at::Tensor& output, const char* op) {
  checkTensor(input, op);
  checkTensor(output, op);
  TORCH_CHECK(output.scalar_type() == input.scalar_type(), "weft: ", op, ": output of type ",
              output.scalar_type(), ", input of type ", input.scalar_type());
}

// The tensors' elements one after another, in a new contiguous tensor.
at::Tensor flatCopy(const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> flat;
  flat.reserve(tensors.size());
  for (const at::Tensor& t : tensors)
    flat.push_back(t.reshape({-1}));
  return at::cat(flat);
}

// Copies consecutive pieces of `flat` into `outputs`.
void spread(const at::Tensor& flat, std::vector<at::Tensor>& outputs) {
  int64_t at = 0;
  for (at::Tensor& out : outputs) {
    out.copy_(flat.narrow(0, at, out.numel()).view(out.sizes()));
    at += out.numel();
  }
}

// A contiguous tensor to receive into for `user`: itself where it is contiguous.
at::Tensor receiveBuffer(const at::Tensor& user) {
  return user.is_contiguous() ? user : at::empty_like(user, at::MemoryFormat::Contiguous);
}

std::function<void()> copyBack(at::Tensor user, at::Tensor buffer) {
  if (buffer.is_same(user)) return {};
  return [user, buffer]() mutable { user.copy_(buffer); };
}

size_t count(const at::Tensor& t) {
  return static_cast<size_t>(t.numel());
}

// Counts and displacements, in elements, of an all_to_all_single side: equal pieces where
// `splits` is empty, else splits[r] rows of `t` for rank r.
void piecesOf(const at::Tensor& t, const std::vector<int64_t>& splits, int size,
              std::vector<size_t>* counts, std::vector<size_t>* displs) {
  const int64_t rows = t.dim() == 0 ? 1 : t.size(0);
  const int64_t rowElems = rows == 0 ? 0 : t.numel() / rows;
  counts->assign(size, 0);
  displs->assign(size, 0);
  if (splits.empty()) {
    TORCH_CHECK(rows % size == 0, "weft: all_to_all_single: ", rows,
                " rows do not split evenly among ", size, " ranks");
  } else {
    TORCH_CHECK(static_cast<int>(splits.size()) == size, "weft: all_to_all_single: ", splits.size(),
                " split sizes for ", size, " ranks");
    int64_t sum = 0;
    for (int64_t s : splits) {
      TORCH_CHECK(s >= 0, "weft: all_to_all_single: a negative split size");
      sum += s;
    }
    TORCH_CHECK(sum == rows, "weft: all_to_all_single: split sizes add up to ", sum, ", not ",
                rows);
  }
  size_t at = 0;
  for (int r = 0; r < size; ++r) {
    const int64_t n = splits.empty() ? rows / size : splits[r];
    (*counts)[r] = static_cast<size_t>(n * rowElems);
    (*displs)[r] = at;
    at += (*counts)[r];
  }
}

}  // namespace

ProcessGroupWeft::ProcessGroupWeft(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                   std::chrono::milliseconds timeout)
    : c10d::ProcessGroup(rank, size), store_(store), timeout_(timeout) {
  weftUniqueId id;
  if (rank == 0) {
    check(weftGetUniqueId(&id), "making the communicator's id");
    const auto* bytes = reinterpret_cast<const uint8_t*>(&id);
    store_->set(kUniqueIdKey, std::vector<uint8_t>(bytes, bytes + sizeof id));
  } else {
    const std::vector<uint8_t> bytes = store_->get(kUniqueIdKey);
    TORCH_CHECK(bytes.size() == sizeof id, "weft: the store holds a communicator id of ",
                bytes.size(), " bytes, not ", sizeof id, " (another library's key?)");
    std::memcpy(&id, bytes.data(), sizeof id);
  }
  weftConfig_t config = WEFT_CONFIG_INITIALIZER;
  config.timeoutMs = static_cast<int>(std::clamp<int64_t>(timeout.count(), 1, INT_MAX));
  config.commName = "torch";
  check(weftCommInitRankConfig(&comm_, size, id, rank, &config), "joining the group");
  queue_ = std::make_unique<OpQueue>([this] { check(weftGroupStart(), "starting a group"); },
                                     [this] { check(weftGroupEnd(), "send/recv"); });
  std::lock_guard<std::mutex> lock(groupsMutex);
  groups().insert(this);
}

ProcessGroupWeft::~ProcessGroupWeft() {
  {
    std::lock_guard<std::mutex> lock(groupsMutex);
    groups().erase(this);
  }
  queue_.reset();  // runs what is queued
  if (comm_ == nullptr) return;
  weftResult_t asyncError = weftSuccess;
  // A communicator that failed may wait on peers that are gone: abort it instead.
  if (weftCommGetAsyncError(comm_, &asyncError) != weftSuccess || asyncError != weftSuccess) {
    weftCommAbort(comm_);
  } else {
    weftCommDestroy(comm_);
  }
}

void ProcessGroupWeft::drainAll() {
  std::lock_guard<std::mutex> lock(groupsMutex);
  for (ProcessGroupWeft* group : groups())
    group->drain();
}

void ProcessGroupWeft::inGroup(const char* what, const std::function<weftResult_t()>& calls) {
  check(weftGroupStart(), what);
  const weftResult_t result = calls();
  const weftResult_t ended = weftGroupEnd();  // also after a failed call: the group must end
  check(result != weftSuccess ? result : ended, what);
}

void ProcessGroupWeft::check(weftResult_t result, const char* what) const {
  if (result == weftSuccess) return;
  const char* last = comm_ != nullptr ? weftGetLastError(comm_) : weftGetLastError(nullptr);
  TORCH_CHECK(false, "weft: ", what, " failed: ", weftGetErrorString(result),
              (last != nullptr && *last != '\0') ? std::string(": ") + last : std::string());
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::enqueue(c10d::OpType type, const char* title,
                                                         std::vector<at::Tensor> outputs,
                                                         std::function<void()> issue,
                                                         std::function<void()> done,
                                                         bool pointToPoint) {
  ++sequence_;
  auto work = c10::make_intrusive<WeftWork>(getRank(), type, title, std::move(outputs));
  queue_->push(Op{work, std::move(issue), std::move(done), pointToPoint});
  return work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::broadcast(std::vector<at::Tensor>& tensors,
                                                           const c10d::BroadcastOptions& opts) {
  at::Tensor t = theOne(tensors, "broadcast");
  const weftDataType_t type = weftTypeOf(t.scalar_type());
  const int root = static_cast<int>(opts.rootRank);
  at::Tensor buf = t.contiguous();
  return enqueue(
      c10d::OpType::BROADCAST, "weft:broadcast", tensors,
      [=, this] {
        check(weftBroadcast(buf.data_ptr(), buf.data_ptr(), count(buf), type, root, comm_, nullptr),
              "broadcast");
      },
      copyBack(t, buf));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::allreduce(std::vector<at::Tensor>& tensors,
                                                           const c10d::AllreduceOptions& opts) {
  at::Tensor t = theOne(tensors, "all_reduce");
  const weftDataType_t type = weftTypeOf(t.scalar_type());
  const weftRedOp_t op = weftOpOf(opts.reduceOp);
  at::Tensor buf = t.contiguous();
  return enqueue(
      c10d::OpType::ALLREDUCE, "weft:all_reduce", tensors,
      [=, this] {
        check(weftAllReduce(buf.data_ptr(), buf.data_ptr(), count(buf), type, op, comm_, nullptr),
              "all_reduce");
      },
      copyBack(t, buf));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::allreduce_coalesced(
    std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) {
  TORCH_CHECK(!tensors.empty(), "weft: all_reduce_coalesced takes at least one tensor");
  for (const at::Tensor& t : tensors)
    checkTensor(t, "all_reduce_coalesced");
  const weftDataType_t type = weftTypeOf(tensors[0].scalar_type());
  for (const at::Tensor& t : tensors) {
    TORCH_CHECK(t.scalar_type() == tensors[0].scalar_type(),
                "weft: all_reduce_coalesced takes tensors of one type, not ",
                tensors[0].scalar_type(), " and ", t.scalar_type());
  }
  const weftRedOp_t op = weftOpOf(opts.reduceOp);
  at::Tensor flat = flatCopy(tensors);
  std::vector<at::Tensor> outputs = tensors;
  return enqueue(
      c10d::OpType::ALLREDUCE_COALESCED, "weft:all_reduce_coalesced", tensors,
      [=, this] {
        check(
            weftAllReduce(flat.data_ptr(), flat.data_ptr(), count(flat), type, op, comm_, nullptr),
            "all_reduce_coalesced");
      },
      [flat, outputs]() mutable { spread(flat, outputs); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::reduce(std::vector<at::Tensor>& tensors,
                                                        const c10d::ReduceOptions& opts) {
  at::Tensor t = theOne(tensors, "reduce");
  const weftDataType_t type = weftTypeOf(t.scalar_type());
  const weftRedOp_t op = weftOpOf(opts.reduceOp);
  const int root = static_cast<int>(opts.rootRank);
  at::Tensor buf = t.contiguous();
  return enqueue(
      c10d::OpType::REDUCE, "weft:reduce", tensors,
      [=, this] {
        check(
            weftReduce(buf.data_ptr(), buf.data_ptr(), count(buf), type, op, root, comm_, nullptr),
            "reduce");
      },
      copyBack(t, buf));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::allgather(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions&) {
  at::Tensor in = theOne(inputs, "all_gather").contiguous();
  TORCH_CHECK(outputs.size() == 1 && static_cast<int>(outputs[0].size()) == getSize(),
              "weft: all_gather takes one list of ", getSize(), " output tensors");
  for (const at::Tensor& out : outputs[0])
    checkLike(out, in, "all_gather");
  const weftDataType_t type = weftTypeOf(in.scalar_type());
  at::Tensor flat = at::empty({in.numel() * getSize()}, in.options());
  std::vector<at::Tensor> outs = outputs[0];
  return enqueue(
      c10d::OpType::ALLGATHER, "weft:all_gather", outs,
      [=, this] {
        check(weftAllGather(in.data_ptr(), flat.data_ptr(), count(in), type, comm_, nullptr),
              "all_gather");
      },
      [flat, outs]() mutable { spread(flat, outs); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::_allgather_base(at::Tensor& output,
                                                                 at::Tensor& input,
                                                                 const c10d::AllgatherOptions&) {
  checkInOut(input, output, "all_gather_into_tensor");
  TORCH_CHECK(output.numel() == input.numel() * getSize(),
              "weft: all_gather_into_tensor: ", "the output holds ", output.numel(),
              " elements, not ", getSize(), " x ", input.numel());
  const weftDataType_t type = weftTypeOf(input.scalar_type());
  at::Tensor in = input.contiguous();
  at::Tensor out = receiveBuffer(output);
  return enqueue(
      c10d::OpType::_ALLGATHER_BASE, "weft:all_gather_into_tensor", {output},
      [=, this] {
        check(weftAllGather(in.data_ptr(), out.data_ptr(), count(in), type, comm_, nullptr),
              "all_gather_into_tensor");
      },
      copyBack(output, out));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::allgather_coalesced(
    std::vector<std::vector<at::Tensor>>& outputLists, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions&) {
  // One output list per rank, each with one tensor per input.
  TORCH_CHECK(static_cast<int>(outputLists.size()) == getSize(),
              "weft: all_gather_coalesced takes one output list per rank");
  std::vector<at::Tensor> ins;
  for (const at::Tensor& t : inputs) {
    checkTensor(t, "all_gather_coalesced");
    ins.push_back(t.contiguous());
  }
  TORCH_CHECK(!ins.empty(), "weft: all_gather_coalesced takes at least one tensor");
  const at::ScalarType dtype = ins[0].scalar_type();
  for (const at::Tensor& t : ins) {
    TORCH_CHECK(t.scalar_type() == dtype, "weft: all_gather_coalesced takes tensors of one type");
  }
  std::vector<at::Tensor> outs;
  for (auto& list : outputLists) {
    TORCH_CHECK(list.size() == ins.size(), "weft: all_gather_coalesced: an output list of ",
                list.size(), " tensors for ", ins.size(), " inputs");
    for (size_t i = 0; i < list.size(); ++i) {
      checkLike(list[i], ins[i], "all_gather_coalesced");
      outs.push_back(list[i]);
    }
  }
  const weftDataType_t type = weftTypeOf(dtype);
  // Every input in one buffer: one all-gather, whose rank-major result is the lists in order.
  at::Tensor in = flatCopy(ins);
  at::Tensor flat = at::empty({in.numel() * getSize()}, in.options());
  return enqueue(
      c10d::OpType::ALLGATHER_COALESCED, "weft:all_gather_coalesced", outs,
      [=, this] {
        check(weftAllGather(in.data_ptr(), flat.data_ptr(), count(in), type, comm_, nullptr),
              "all_gather_coalesced");
      },
      [flat, outs]() mutable { spread(flat, outs); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::gather(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::GatherOptions& opts) {
  at::Tensor in = theOne(inputs, "gather").contiguous();
  const int root = static_cast<int>(opts.rootRank);
  const weftDataType_t type = weftTypeOf(in.scalar_type());
  std::vector<at::Tensor> outs;
  if (getRank() == root) {
    TORCH_CHECK(outputs.size() == 1 && static_cast<int>(outputs[0].size()) == getSize(),
                "weft: gather takes one list of ", getSize(), " output tensors on the root");
    for (const at::Tensor& out : outputs[0])
      checkLike(out, in, "gather");
    outs = outputs[0];
  } else {
    TORCH_CHECK(outputs.empty() || (outputs.size() == 1 && outputs[0].empty()),
                "weft: gather takes output tensors on the root only");
  }
  at::Tensor flat =
      getRank() == root ? at::empty({in.numel() * getSize()}, in.options()) : at::Tensor();
  return enqueue(
      c10d::OpType::GATHER, "weft:gather", outs,
      [=, this] {
        inGroup("gather", [&] {
          weftResult_t result = weftSuccess;
          if (getRank() == root) {
            const size_t n = count(in);
            auto* base = static_cast<char*>(flat.data_ptr());
            for (int r = 0; r < getSize() && result == weftSuccess; ++r) {
              void* slot = base + r * n * in.element_size();
              if (r == root) {
                std::memcpy(slot, in.data_ptr(), n * in.element_size());
              } else {
                result = weftRecv(slot, n, type, r, comm_, nullptr);
              }
            }
          } else {
            result = weftSend(in.data_ptr(), count(in), type, root, comm_, nullptr);
          }
          return result;
        });
      },
      [flat, outs]() mutable {
        if (flat.defined()) spread(flat, outs);
      });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::scatter(
    std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ScatterOptions& opts) {
  at::Tensor output = theOne(outputs, "scatter");
  const int root = static_cast<int>(opts.rootRank);
  const weftDataType_t type = weftTypeOf(output.scalar_type());
  at::Tensor flat;
  if (getRank() == root) {
    TORCH_CHECK(inputs.size() == 1 && static_cast<int>(inputs[0].size()) == getSize(),
                "weft: scatter takes one list of ", getSize(), " input tensors on the root");
    for (const at::Tensor& t : inputs[0])
      checkLike(t, output, "scatter");
    flat = flatCopy(inputs[0]);
  } else {
    TORCH_CHECK(inputs.empty() || (inputs.size() == 1 && inputs[0].empty()),
                "weft: scatter takes input tensors on the root only");
  }
  at::Tensor out = receiveBuffer(output);
  return enqueue(
      c10d::OpType::SCATTER, "weft:scatter", outputs,
      [=, this] {
        inGroup("scatter", [&] {
          weftResult_t result = weftSuccess;
          const size_t n = count(out);
          if (getRank() == root) {
            const auto* base = static_cast<const char*>(flat.data_ptr());
            for (int r = 0; r < getSize() && result == weftSuccess; ++r) {
              const void* piece = base + r * n * out.element_size();
              if (r == root) {
                std::memcpy(out.data_ptr(), piece, n * out.element_size());
              } else {
                result = weftSend(piece, n, type, r, comm_, nullptr);
              }
            }
          } else {
            result = weftRecv(out.data_ptr(), n, type, root, comm_, nullptr);
          }
          return result;
        });
      },
      copyBack(output, out));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::reduce_scatter(
    std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  at::Tensor output = theOne(outputs, "reduce_scatter");
  TORCH_CHECK(inputs.size() == 1 && static_cast<int>(inputs[0].size()) == getSize(),
              "weft: reduce_scatter takes one list of ", getSize(), " input tensors");
  for (const at::Tensor& t : inputs[0])
    checkLike(t, output, "reduce_scatter");
  const weftDataType_t type = weftTypeOf(output.scalar_type());
  const weftRedOp_t op = weftOpOf(opts.reduceOp);
  at::Tensor flat = flatCopy(inputs[0]);
  at::Tensor out = receiveBuffer(output);
  return enqueue(
      c10d::OpType::REDUCE_SCATTER, "weft:reduce_scatter", outputs,
      [=, this] {
        check(weftReduceScatter(flat.data_ptr(), out.data_ptr(), count(out), type, op, comm_,
                                nullptr),
              "reduce_scatter");
      },
      copyBack(output, out));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::_reduce_scatter_base(
    at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) {
  checkInOut(input, output, "reduce_scatter_tensor");
  TORCH_CHECK(input.numel() == output.numel() * getSize(),
              "weft: reduce_scatter_tensor: ", "the input holds ", input.numel(), " elements, not ",
              getSize(), " x ", output.numel());
  const weftDataType_t type = weftTypeOf(input.scalar_type());
  const weftRedOp_t op = weftOpOf(opts.reduceOp);
  at::Tensor in = input.contiguous();
  at::Tensor out = receiveBuffer(output);
  return enqueue(
      c10d::OpType::_REDUCE_SCATTER_BASE, "weft:reduce_scatter_tensor", {output},
      [=, this] {
        check(
            weftReduceScatter(in.data_ptr(), out.data_ptr(), count(out), type, op, comm_, nullptr),
            "reduce_scatter_tensor");
      },
      copyBack(output, out));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::alltoall_base(at::Tensor& output,
                                                               at::Tensor& input,
                                                               std::vector<int64_t>& outputSplits,
                                                               std::vector<int64_t>& inputSplits,
                                                               const c10d::AllToAllOptions&) {
  checkInOut(input, output, "all_to_all_single");
  const weftDataType_t type = weftTypeOf(input.scalar_type());
  std::vector<size_t> sendCounts, sendDispls, recvCounts, recvDispls;
  piecesOf(input, inputSplits, getSize(), &sendCounts, &sendDispls);
  piecesOf(output, outputSplits, getSize(), &recvCounts, &recvDispls);
  at::Tensor in = input.contiguous();
  at::Tensor out = receiveBuffer(output);
  return enqueue(
      c10d::OpType::ALLTOALL_BASE, "weft:all_to_all_single", {output},
      [=, this] {
        check(weftAllToAllv(in.data_ptr(), sendCounts.data(), sendDispls.data(), out.data_ptr(),
                            recvCounts.data(), recvDispls.data(), type, comm_, nullptr),
              "all_to_all_single");
      },
      copyBack(output, out));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::alltoall(std::vector<at::Tensor>& outputs,
                                                          std::vector<at::Tensor>& inputs,
                                                          const c10d::AllToAllOptions&) {
  TORCH_CHECK(
      static_cast<int>(inputs.size()) == getSize() && static_cast<int>(outputs.size()) == getSize(),
      "weft: all_to_all takes ", getSize(), " input and ", getSize(), " output tensors");
  for (const at::Tensor& t : inputs)
    checkTensor(t, "all_to_all");
  for (const at::Tensor& t : outputs)
    checkTensor(t, "all_to_all");
  const at::ScalarType dtype = inputs[0].scalar_type();
  for (const auto* list : {&inputs, &outputs}) {
    for (const at::Tensor& t : *list) {
      TORCH_CHECK(t.scalar_type() == dtype, "weft: all_to_all takes tensors of one type");
    }
  }
  const weftDataType_t type = weftTypeOf(dtype);
  std::vector<size_t> sendCounts, sendDispls, recvCounts, recvDispls;
  size_t sendAt = 0, recvAt = 0;
  for (int r = 0; r < getSize(); ++r) {
    sendCounts.push_back(count(inputs[r]));
    sendDispls.push_back(sendAt);
    sendAt += count(inputs[r]);
    recvCounts.push_back(count(outputs[r]));
    recvDispls.push_back(recvAt);
    recvAt += count(outputs[r]);
  }
  at::Tensor in = flatCopy(inputs);
  at::Tensor flat = at::empty({static_cast<int64_t>(recvAt)}, inputs[0].options());
  std::vector<at::Tensor> outs = outputs;
  return enqueue(
      c10d::OpType::ALLTOALL, "weft:all_to_all", outs,
      [=, this] {
        check(weftAllToAllv(in.data_ptr(), sendCounts.data(), sendDispls.data(), flat.data_ptr(),
                            recvCounts.data(), recvDispls.data(), type, comm_, nullptr),
              "all_to_all");
      },
      [flat, outs]() mutable { spread(flat, outs); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::send(std::vector<at::Tensor>& tensors, int dstRank,
                                                      int) {
  at::Tensor t = theOne(tensors, "send");
  TORCH_CHECK(dstRank >= 0 && dstRank < getSize() && dstRank != getRank(), "weft: send to rank ",
              dstRank, " of a group of ", getSize(), " from rank ", getRank());
  const weftDataType_t type = weftTypeOf(t.scalar_type());
  at::Tensor buf = t.contiguous();
  return enqueue(
      c10d::OpType::SEND, "weft:send", tensors,
      [=, this] {
        check(weftSend(buf.data_ptr(), count(buf), type, dstRank, comm_, nullptr), "send");
      },
      {}, true);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::recv(std::vector<at::Tensor>& tensors, int srcRank,
                                                      int) {
  at::Tensor t = theOne(tensors, "recv");
  TORCH_CHECK(srcRank >= 0 && srcRank < getSize() && srcRank != getRank(), "weft: recv from rank ",
              srcRank, " of a group of ", getSize(), " at rank ", getRank());
  const weftDataType_t type = weftTypeOf(t.scalar_type());
  at::Tensor buf = receiveBuffer(t);
  auto work = enqueue(
      c10d::OpType::RECV, "weft:recv", tensors,
      [=, this] {
        check(weftRecv(buf.data_ptr(), count(buf), type, srcRank, comm_, nullptr), "recv");
      },
      copyBack(t, buf), true);
  static_cast<WeftWork*>(work.get())->setSourceRank(std::make_shared<int>(srcRank));
  return work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::recvAnysource(std::vector<at::Tensor>& tensors,
                                                               int) {
  at::Tensor t = theOne(tensors, "recv");
  const weftDataType_t type = weftTypeOf(t.scalar_type());
  at::Tensor buf = receiveBuffer(t);
  auto source = std::make_shared<int>(-1);  // written by the worker before the work completes
  // Not grouped with the sends and receives queued beside it: Weft runs it alone.
  auto work = enqueue(
      c10d::OpType::RECVANYSOURCE, "weft:recvAnySource", tensors,
      [=, this] {
        check(weftRecvAnySource(buf.data_ptr(), count(buf), type, source.get(), comm_, nullptr),
              "recv from any source");
      },
      copyBack(t, buf), false);
  static_cast<WeftWork*>(work.get())->setSourceRank(std::move(source));
  return work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::barrier(const c10d::BarrierOptions&) {
  return enqueue(c10d::OpType::BARRIER, "weft:barrier", {},
                 [this] { check(weftBarrier(comm_, nullptr), "barrier"); });
}

void ProcessGroupWeft::monitoredBarrier(const c10d::BarrierOptions& opts, bool waitAllRanks) {
  // What was queued before runs first, as in any collective.
  barrier(c10d::BarrierOptions())->wait();
  const std::chrono::milliseconds timeout =
      opts.timeout == c10d::kUnsetTimeout ? timeout_ : opts.timeout;
  const std::string prefix = "weft/monitored_barrier/" + std::to_string(monitoredBarriers_++);
  const std::string release = prefix + "/release";
  if (getRank() != 0) {
    store_->set(prefix + "/" + std::to_string(getRank()), {1});
    try {
      store_->wait({release}, timeout);
    } catch (const std::exception& e) {
      TORCH_CHECK(false, "weft: rank ", getRank(), " was not released from monitored_barrier by ",
                  "rank 0 within ", timeout.count(), " ms: ", e.what());
    }
    return;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<int> missing;
  for (int r = 1; r < getSize(); ++r) {
    const auto left = std::max(std::chrono::milliseconds(1),
                               std::chrono::duration_cast<std::chrono::milliseconds>(
                                   deadline - std::chrono::steady_clock::now()));
    try {
      store_->wait({prefix + "/" + std::to_string(r)}, left);
    } catch (const std::exception&) {
      missing.push_back(r);
      if (!waitAllRanks) break;
    }
  }
  if (!missing.empty()) {
    std::string ranks;
    for (int r : missing)
      ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
    TORCH_CHECK(false, "weft: rank", missing.size() > 1 ? "s " : " ", ranks,
                " failed to pass monitoredBarrier in ", timeout.count(), " ms");
  }
  store_->set(release, {1});
}

}  // namespace weft::torch_backend
