// UcxLink: a Link over UCP's tag API to one peer. The byte stream goes as tagged messages that
// never cross a multiple of kUnit in stream position (a unit), each tagged with where it starts.
// The receiver takes them straight into a ring indexed by stream position (so a view is
// 8-aligned exactly where the stream is), with a receive posted in every unit of the ring the
// reader has freed, so that messages land where they belong rather than wait in UCX; it returns
// credits as it consumes, so that the sender never runs more than the ring's size ahead and UCX
// never holds more than that for a slow reader.
// The first message each way is a hello with the communicator's secret; the last, a goodbye
// with the final stream position.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include "transports/link.h"
#include "transports/transport.h"
#include "transports/ucx/ucx_wire.h"
#include "transports/ucx/ucx_worker.h"

namespace weft::ucx {

// One tagged receive: posted, then tested until done (at once, where UCX completed it within the
// post).
class Receive {
 public:
  ~Receive() { free(); }
  Status post(ucp_worker_h worker, void* buffer, size_t bytes, uint64_t tag);
  // True once done; then status() and length() tell the outcome, and the request is freed.
  bool test();
  bool posted() const { return request_ != nullptr || done_; }
  ucs_status_t status() const { return status_; }
  size_t length() const { return length_; }
  // Forgets a finished receive, so that another may be posted.
  void reset() { done_ = false; }
  // Asks UCX to cancel one still running; test() then says when it has let go of the buffer
  // (a receive already under way finishes first).
  void cancel(ucp_worker_h worker);

 private:
  void free();

  void* request_ = nullptr;
  bool done_ = false;
  ucs_status_t status_ = UCS_OK;
  size_t length_ = 0;
  ucp_tag_recv_info_t info_{};
};

// What UCX may write into or call back into after a call returns: the buffers it sends from and
// receives into, and what its callbacks set. Apart from the link, so that where UCX does not
// give up its requests in time at teardown, this (and with it the worker) is left allocated
// instead of freed under UCX.
struct Exposed {
  std::shared_ptr<UcxWorker> worker;
  int peer = -1;
  Status epError;               // a send failed or the endpoint broke (UCX's error callback)
  int unfinished = 0;           // sends UCX has not finished
  bool creditInFlight = false;  // creditOut is still UCX's
  Hello myHello{};
  Hello hello{};  // the peer's
  Goodbye goodbye{};
  Goodbye myGoodbye{};
  uint64_t creditIn = 0;                 // the credit being received
  uint64_t creditOut = 0;                // the credit being sent
  std::unique_ptr<uint64_t[]> ring;      // received bytes by stream position; 8-aligned
  std::unique_ptr<uint64_t[]> sendRing;  // sent bytes by stream position, until acknowledged
};

class UcxLink : public Link {
 public:
  // Connects to the peer's worker and posts the first receives; hello() then tells whether the
  // peer's hello has come and is good.
  static Status create(const TransportContext& ctx, std::shared_ptr<UcxWorker> worker, int peer,
                       const std::vector<uint8_t>& peerAddress, std::unique_ptr<UcxLink>* out);
  ~UcxLink() override;

  // Ok with *done once the peer's hello came and carried this communicator's secret.
  Status helloDone(bool* done);

  Status write(const void* data, size_t bytes, size_t* written) override;
  Status peek(const void** data, size_t* bytes) override;
  void consume(size_t bytes) override;
  Status checkPeer() override;
  // Asks the thread that drives the link to say goodbye and close it at its next call (UCX's
  // worker is not shared between threads); the destructor does it where no call comes.
  void close() override { closeRequested_.store(true); }
  // The farewell goes in the goodbye, which the driving thread sends as it closes.
  void sayFarewell(const Farewell& why) override;
  Farewell receivedFarewell() override;
  const char* kind() const override { return "ucx"; }

 private:
  UcxLink(const TransportContext& ctx, std::shared_ptr<UcxWorker> worker, int peer);
  static void onEndpointError(void* arg, ucp_ep_h ep, ucs_status_t status);

  // Moves UCX along and settles what it finished: receives, credits, sends.
  Status pump();
  Status settleData();
  Status settleCredit();
  Status peerEnd() const;
  Status postData();
  Status sendCredit();
  // Sends; where UCX finishes later, onSent (or onCreditSent) counts it done.
  Status send(uint64_t tag, const void* data, size_t bytes, bool credit);
  static void onSent(void* request, ucs_status_t status, void* user);
  static void onCreditSent(void* request, ucs_status_t status, void* user);
  // Says goodbye, flushes what was sent (for a bounded time) and closes the endpoint.
  void finish();

  TransportContext ctx_;
  std::shared_ptr<UcxWorker> worker_;
  int peer_;
  std::unique_ptr<Exposed> x_;
  ucp_ep_h ep_ = nullptr;
  Status fatal_;  // the peer broke the protocol: the link is unusable
  std::atomic<bool> closeRequested_{false};
  bool closed_ = false;
  bool clean_ = true;  // finish() saw every send and the endpoint's close through

  Receive helloReceive_;
  bool helloChecked_ = false;
  Receive goodbyeReceive_;
  bool peerGone_ = false;  // its goodbye came: it sends no more than x_->goodbye.streamBytes
  // The farewells, which a thread other than the driving one may say or read.
  mutable std::mutex farewellMutex_;
  Farewell farewellOut_;
  Farewell farewellIn_;

  uint64_t received_ = 0;
  uint64_t consumed_ = 0;
  uint64_t nextUnit_ = 0;  // where the first unit with no receive posted yet starts
  // By ring slot: the receive posted in each unit from received_'s up to nextUnit_, at the
  // unit's start or, in received_'s unit, at received_.
  std::array<Receive, kWindow / kUnit> dataReceives_;

  uint64_t sent_ = 0;
  uint64_t acked_ = 0;  // what the peer has consumed, by its last credit
  Receive creditReceive_;
  uint64_t creditSent_ = 0;  // the last credit handed to UCX
};

}  // namespace weft::ucx
