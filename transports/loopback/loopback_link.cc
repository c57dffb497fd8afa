#include "transports/loopback/loopback_link.h"

#include <vector>

#include "transports/byte_ring.h"

namespace weft {
namespace {

// Both directions' memory, shared by the two ends.
struct LoopbackPipe {
  explicit LoopbackPipe(size_t capacity) : bufferAB(capacity), bufferBA(capacity) {
    ByteRing::initialize(&controlAB);
    ByteRing::initialize(&controlBA);
  }
  RingControl controlAB;
  RingControl controlBA;
  std::vector<char> bufferAB;
  std::vector<char> bufferBA;
};

class LoopbackLink : public Link {
 public:
  LoopbackLink(std::shared_ptr<LoopbackPipe> pipe, bool sideA, size_t paceBytes)
      : pipe_(std::move(pipe)), paceBytes_(paceBytes) {
    size_t cap = pipe_->bufferAB.size();
    ByteRing ab(&pipe_->controlAB, pipe_->bufferAB.data(), cap, cap);
    ByteRing ba(&pipe_->controlBA, pipe_->bufferBA.data(), cap, cap);
    out_ = sideA ? ab : ba;
    in_ = sideA ? ba : ab;
  }
  ~LoopbackLink() override { close(); }

  Status write(const void* data, size_t bytes, size_t* written) override {
    if (out_.closed()) return closedError();
    *written = out_.write(data, bytes);
    return okStatus();
  }
  Status peek(const void** data, size_t* bytes) override {
    if (!in_.peekUnlessEnded(data, bytes)) return closedError();
    return okStatus();
  }
  void consume(size_t bytes) override { in_.consume(bytes); }
  size_t paceBytes() const override { return paceBytes_; }
  void close() override {
    out_.close();
    in_.close();
  }
  void sayFarewell(const Farewell& why) override { out_.leaveFarewell(why); }
  Farewell receivedFarewell() override { return in_.farewell(); }
  const char* kind() const override { return "loopback"; }

 private:
  Status closedError() const {
    return farewellError(-1, in_.farewell(),
                         Status(weftRemoteError, "loopback peer closed the link"));
  }

  std::shared_ptr<LoopbackPipe> pipe_;
  size_t paceBytes_;
  ByteRing out_;
  ByteRing in_;
};

}  // namespace

std::pair<std::unique_ptr<Link>, std::unique_ptr<Link>> makeLoopbackPair(size_t capacity,
                                                                         size_t paceBytes) {
  auto pipe = std::make_shared<LoopbackPipe>(capacity);
  return {std::make_unique<LoopbackLink>(pipe, true, paceBytes),
          std::make_unique<LoopbackLink>(pipe, false, paceBytes)};
}

}  // namespace weft
