// Which stores staged reductions stage their chunks with (collectives/staged.h): ordinary ones,
// which leave a chunk in this core's cache for the peers to read from there, or non-temporal
// ones, which send it to memory. Which is faster depends on where the cores sit at the moment.
// Measured on a 2-core VM, 256K to 64M, 2 and 4 ranks: ordinary stores were 15-30% faster while
// the two vCPUs shared an L3 (a cache-line round trip of 50-90 ns), and non-temporal ones
// 1.5-1.8x faster while they did not (180-250 ns); the VM moved between the two within minutes.
//
// So each rank times its staged reductions and keeps the faster kind for all of them: the third
// timed call of each size class and every kExplorePeriod-th timed call try the other kind, and
// compare its time per byte with the best of the kind in use's last kWindow calls of the same
// size (by power of two) and placement (in-place calls ran up to 1.8x faster than others of the
// same size). A call is only ever slowed by what else runs, so the best of a few is the fair
// figure. The choice is each rank's own, as the chunks hold the same bytes either way; ranks
// that call alike explore on the same calls, so each times the other kind against peers that do
// the same.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace weft {

class StagingStores {
 public:
  enum class Mode { kAuto, kCached, kStreamed };
  // Smaller reductions are timed too coarsely by one call; they keep the kind in use.
  static constexpr size_t kMinBytes = size_t{256} << 10;
  static constexpr uint64_t kExplorePeriod = 16;
  static constexpr int kWindow = 4;
  // The other kind takes over only when a call with it was this much faster.
  static constexpr double kSwitchRatio = 0.85;

  // WEFT_SHM_STAGE_STORES as spelled there: auto, cached or streamed; empty optional otherwise.
  static std::optional<Mode> parse(const std::string& text);

  explicit StagingStores(Mode mode = Mode::kAuto) : mode_(mode) {}

  // Whether the staged reduction about to start, with `bytes` of input on this rank and in
  // place or not, stages with non-temporal stores. record() then gets its time.
  bool streamFor(size_t bytes, bool inPlace);
  // How long the call streamFor() last answered took, from start to finish.
  void record(double seconds);

  // The kind in use: whether staged reductions stream (those that do not explore).
  bool streaming() const { return mode_ == Mode::kAuto ? streamed_ : mode_ == Mode::kStreamed; }

 private:
  static constexpr int kClasses = 16;  // 256K .. 8G and up
  // The times per byte of a kind's last kWindow calls of one size class.
  struct Times {
    std::array<double, kWindow> latest{};
    int count = 0;
    void add(double perByte) { latest[count++ % kWindow] = perByte; }
    double best() const;
  };
  struct SizeClass {
    bool seen = false;  // its first call is not timed: it faults the buffers' pages in
    bool explored = false;
    std::array<Times, 2> times;  // ordinary stores, then streaming ones
  };
  static int classOf(size_t bytes, bool inPlace);

  Mode mode_;
  bool streamed_ = false;
  uint64_t timedCalls_ = 0;
  bool exploreDue_ = false;
  std::array<SizeClass, 2 * kClasses> classes_{};  // by size, out of place then in place
  // The call being timed: its class (-1: none), size, the kind it used, and whether it tried
  // the kind not in use.
  int pending_ = -1;
  size_t pendingBytes_ = 0;
  bool pendingStreamed_ = false;
  bool pendingExplores_ = false;
};

}  // namespace weft
