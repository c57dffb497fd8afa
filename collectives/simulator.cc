#include "collectives/simulator.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>

#include "collectives/memory_face.h"
#include "transports/loopback/loopback_link.h"

namespace weft {
namespace {

constexpr unsigned char kGarbage = 0xA5;

// Every virtual rank's buffers, as the others reach them, and the signals between ranks.
class SimMemory {
 public:
  explicit SimMemory(const std::vector<std::vector<BufferView>>& buffers)
      : buffers_(buffers), n_(buffers.size()), raised_(n_ * n_, 0), taken_(n_ * n_, 0) {}

  class Face : public MemoryFace {
   public:
    Face(SimMemory* memory, int rank) : memory_(memory), rank_(rank) {}
    PeerBuffer buffer(int peer, BufId buf) override {
      const auto& all = memory_->buffers_;
      if (peer == rank_ || peer < 0 || static_cast<size_t>(peer) >= all.size() ||
          buf >= all[peer].size()) {
        return {};
      }
      const BufferView& b = all[peer][buf];
      return {b.base, b.count * b.elemSize};
    }
    void signal(int peer) override { ++memory_->raised_[memory_->pair(rank_, peer)]; }
    bool takeSignal(int peer) override {
      const size_t at = memory_->pair(peer, rank_);
      if (memory_->taken_[at] == memory_->raised_[at]) return false;
      ++memory_->taken_[at];
      return true;
    }

   private:
    SimMemory* memory_;
    int rank_;
  };

 private:
  size_t pair(int from, int to) const {
    return static_cast<size_t>(from) * n_ + static_cast<size_t>(to);
  }
  const std::vector<std::vector<BufferView>>& buffers_;
  size_t n_;
  std::vector<uint64_t> raised_, taken_;  // by (from, to)
};

// What a rank's buffers hold outside its run: its data waits here until it starts, and its
// results once it ends, while the buffers hold garbage.
class Lifetimes {
 public:
  explicit Lifetimes(const std::vector<std::vector<BufferView>>& buffers)
      : buffers_(buffers), held_(buffers.size()) {}

  // Sets rank r's data (or results) aside and fills its buffers with garbage. Buffers that
  // overlap (in place) are all set aside before any is filled.
  void setAside(int r) {
    held_[r].clear();
    for (const BufferView& b : buffers_[r])
      held_[r].emplace_back(b.base, b.base + bytes(b));
    for (const BufferView& b : buffers_[r])
      if (bytes(b) > 0) memset(b.base, kGarbage, bytes(b));
  }
  void putBack(int r) {
    for (size_t i = 0; i < held_[r].size(); ++i)
      std::copy(held_[r][i].begin(), held_[r][i].end(), buffers_[r][i].base);
  }
  bool untouched(int r) const {
    for (const BufferView& b : buffers_[r]) {
      if (std::any_of(b.base, b.base + bytes(b),
                      [](char c) { return static_cast<unsigned char>(c) != kGarbage; })) {
        return false;
      }
    }
    return true;
  }

 private:
  static size_t bytes(const BufferView& b) { return b.count * b.elemSize; }
  const std::vector<std::vector<BufferView>>& buffers_;
  std::vector<std::vector<std::vector<char>>> held_;
};

}  // namespace

Status simulate(const std::vector<Schedule>& schedules,
                const std::vector<std::vector<BufferView>>& buffers, ReduceFn reduce,
                const SimOptions& options) {
  const int n = static_cast<int>(schedules.size());
  const auto un = static_cast<size_t>(n);
  // A link for every pair that talks.
  std::vector<std::vector<bool>> talks(un, std::vector<bool>(un, false));
  for (int r = 0; r < n; ++r) {
    for (const Step& s : schedules[r].steps) {
      if (!isMemoryStep(s.kind) && s.peer >= 0 && s.peer < n && s.peer != r) {
        talks[r][s.peer] = true;
        talks[s.peer][r] = true;
      }
    }
  }
  std::vector<std::unique_ptr<Link>> links;
  std::vector<std::vector<Channel>> channels(un, std::vector<Channel>(un));
  std::vector<std::vector<Channel*>> channelPtrs(un, std::vector<Channel*>(un, nullptr));
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      if (!talks[a][b]) continue;
      auto [la, lb] = makeLoopbackPair(options.linkCapacity, options.paceBytes);
      channels[a][b] = Channel(la.get(), 1, a, b);
      channels[b][a] = Channel(lb.get(), 1, b, a);
      channelPtrs[a][b] = &channels[a][b];
      channelPtrs[b][a] = &channels[b][a];
      links.push_back(std::move(la));
      links.push_back(std::move(lb));
    }
  }
  const bool memory = std::any_of(schedules.begin(), schedules.end(),
                                  [](const Schedule& s) { return s.usesMemory(); });
  SimMemory shared(buffers);
  std::vector<SimMemory::Face> faces;
  faces.reserve(un);
  for (int r = 0; r < n; ++r)
    faces.emplace_back(&shared, r);
  std::vector<Executor> executors(un);
  for (int r = 0; r < n; ++r) {
    WEFT_RETURN_IF_ERROR(executors[r]
                             .start(schedules[r], buffers[r], reduce, channelPtrs[r].data(), n,
                                    memory ? &faces[r] : nullptr)
                             .withContext(strprintf("rank %d", r)));
  }
  // Without memory steps, every rank starts at once and they take turns in rank order.
  std::mt19937_64 random(options.seed);
  std::vector<int> order(un);
  std::iota(order.begin(), order.end(), 0);
  std::vector<size_t> startPass(un, 0);
  std::vector<bool> started(un, !memory), finished(un, false);
  Lifetimes lifetimes(buffers);
  if (memory) {
    for (int r = 0; r < n; ++r) {
      startPass[r] = random() % (2 * un + 1);
      executors[r].setLocalStepsPerPass(1);
      executors[r].shuffleLocalSteps(options.seed * 1000 + static_cast<uint64_t>(r));
      lifetimes.setAside(r);
    }
  }
  for (size_t pass = 0;; ++pass) {
    if (memory) std::shuffle(order.begin(), order.end(), random);
    bool anyProgress = false;
    bool allDone = true;
    bool allStarted = true;
    for (int r : order) {
      if (finished[r]) continue;
      if (!started[r]) {
        if (pass < startPass[r]) {
          allStarted = false;
          allDone = false;
          continue;
        }
        lifetimes.putBack(r);
        started[r] = true;
      }
      bool progressed = false;
      WEFT_RETURN_IF_ERROR(executors[r].progress(&progressed).withContext(strprintf("rank %d", r)));
      anyProgress = anyProgress || progressed;
      if (executors[r].done()) {
        finished[r] = true;
        if (memory) lifetimes.setAside(r);
      } else {
        allDone = false;
      }
    }
    if (allDone) break;
    if (!anyProgress && allStarted) {
      std::string what;
      for (int r = 0; r < n; ++r) {
        if (!executors[r].done()) {
          what += strprintf("\n  rank %d waits: %s", r, executors[r].describeWait().c_str());
        }
      }
      return errorf(weftInternalError, "schedule deadlocks:%s", what.c_str());
    }
  }
  if (!memory) return okStatus();
  for (int r = 0; r < n; ++r) {
    if (!lifetimes.untouched(r)) {
      return errorf(weftInternalError, "rank %d's buffers changed after it finished", r);
    }
    lifetimes.putBack(r);
  }
  return okStatus();
}

}  // namespace weft
