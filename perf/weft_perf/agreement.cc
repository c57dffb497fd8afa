#include "perf/weft_perf/agreement.h"

#include <algorithm>
#include <cstring>

#include "perf/weft_perf/weft_error.h"

namespace weft::perf {
namespace {

double combineTwo(double a, double b, Agreement::Combine how) {
  switch (how) {
    case Agreement::Combine::kRank0:
      return a;
    case Agreement::Combine::kSum:
      return a + b;
    case Agreement::Combine::kMin:
      return std::min(a, b);
    case Agreement::Combine::kMax:
      break;
  }
  return std::max(a, b);
}

// The same over the processes: rank 0's values are process 0's, sent to the others.
void combineProcesses(std::vector<double>& values, Agreement::Combine how, weftComm_t control) {
  const size_t n = values.size();
  double* v = values.data();
  if (how == Agreement::Combine::kRank0) {
    checkWeft(weftBroadcast(v, v, n, weftFloat64, 0, control, nullptr), "weftBroadcast", control);
    return;
  }
  const weftRedOp_t op = how == Agreement::Combine::kSum   ? weftSum
                         : how == Agreement::Combine::kMin ? weftMin
                                                           : weftMax;
  checkWeft(weftAllReduce(v, v, n, weftFloat64, op, control, nullptr), "weftAllReduce", control);
}

}  // namespace

Agreement::Agreement(const World& world)
    : threads_(world.threads()),
      control_(world.control()),
      values_(static_cast<size_t>(threads_)),
      texts_(static_cast<size_t>(threads_)) {}

void Agreement::meet(const std::function<void()>& leader) {
  std::unique_lock<std::mutex> lock(mutex_);
  const uint64_t meeting = meeting_;
  if (++waiting_ < threads_) {
    arrived_.wait(lock, [&] { return meeting_ != meeting; });
    return;
  }
  // The others wait for this meeting to end, so none changes what the leader reads.
  leader();
  waiting_ = 0;
  ++meeting_;
  arrived_.notify_all();
}

void Agreement::barrier(int /*thread*/) {
  meet([&] {
    if (control_ != nullptr) checkWeft(weftBarrier(control_, nullptr), "weftBarrier", control_);
  });
}

std::vector<double> Agreement::combine(int thread, const std::vector<double>& mine, Combine how) {
  values_[thread] = mine;
  meet([&] {
    combined_ = values_[0];
    for (int t = 1; t < threads_; ++t) {
      for (size_t i = 0; i < combined_.size(); ++i) {
        combined_[i] = combineTwo(combined_[i], values_[t][i], how);
      }
    }
    if (control_ != nullptr) combineProcesses(combined_, how, control_);
  });
  return combined_;
}

std::string Agreement::gather(int thread, const std::string& mine) {
  texts_[thread] = mine.substr(0, kTextBytes - 1);
  meet([&] {
    // A fixed block per rank, zero-padded, so the processes can gather them in one call.
    std::vector<char> blocks(kTextBytes * static_cast<size_t>(threads_), '\0');
    for (int t = 0; t < threads_; ++t) {
      std::memcpy(blocks.data() + kTextBytes * t, texts_[t].data(), texts_[t].size());
    }
    if (control_ != nullptr) {
      int processes = 1;
      checkWeft(weftCommCount(control_, &processes), "weftCommCount", control_);
      std::vector<char> all(blocks.size() * static_cast<size_t>(processes));
      checkWeft(
          weftAllGather(blocks.data(), all.data(), blocks.size(), weftUint8, control_, nullptr),
          "weftAllGather", control_);
      blocks = std::move(all);
    }
    gathered_.clear();
    for (size_t at = 0; at < blocks.size(); at += kTextBytes) {
      gathered_ += blocks.data() + at;
    }
  });
  return gathered_;
}

}  // namespace weft::perf
