#include "transports/ucx/ucx_link.h"

#include "src/base/log.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace weft::ucx {
namespace {

constexpr uint64_t kCreditEvery = kWindow / 4;  // consumed bytes between credits
constexpr auto kFlushTime = std::chrono::seconds(1);

// The ring slot of the unit that holds stream position `at`.
size_t slotOf(uint64_t at) {
  return static_cast<size_t>(at % kWindow / kUnit);
}

}  // namespace

Status Receive::post(ucp_worker_h worker, void* buffer, size_t bytes, uint64_t tag) {
  ucp_request_param_t p{};
  p.op_attr_mask = UCP_OP_ATTR_FIELD_RECV_INFO | UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  p.recv_info.tag_info = &info_;
  void* r = ucp_tag_recv_nbx(worker, buffer, bytes, tag, kTagMask, &p);
  if (UCS_PTR_IS_ERR(r)) return ucxError(weftSystemError, "posting a receive", UCS_PTR_STATUS(r));
  request_ = r;
  done_ = r == nullptr;
  status_ = UCS_OK;
  length_ = done_ ? info_.length : 0;
  return okStatus();
}

bool Receive::test() {
  if (done_) return true;
  if (request_ == nullptr) return false;
  ucp_tag_recv_info_t info{};
  ucs_status_t st = ucp_tag_recv_request_test(request_, &info);
  if (st == UCS_INPROGRESS) return false;
  status_ = st;
  length_ = info.length;
  free();
  done_ = true;
  return true;
}

void Receive::cancel(ucp_worker_h worker) {
  if (request_ != nullptr) ucp_request_cancel(worker, request_);
}

void Receive::free() {
  if (request_ != nullptr) ucp_request_free(request_);
  request_ = nullptr;
}

UcxLink::UcxLink(const TransportContext& ctx, std::shared_ptr<UcxWorker> worker, int peer)
    : ctx_(ctx), worker_(std::move(worker)), peer_(peer), x_(new Exposed) {
  x_->worker = worker_;
  x_->peer = peer;
  x_->ring.reset(new uint64_t[kWindow / sizeof(uint64_t)]);
  x_->sendRing.reset(new uint64_t[kWindow / sizeof(uint64_t)]);
}

Status UcxLink::create(const TransportContext& ctx, std::shared_ptr<UcxWorker> worker, int peer,
                       const std::vector<uint8_t>& peerAddress, std::unique_ptr<UcxLink>* out) {
  std::unique_ptr<UcxLink> l(new UcxLink(ctx, std::move(worker), peer));
  std::lock_guard<std::mutex> lock(l->worker_->mutex());  // its thread may be progressing it
  ucp_ep_params_t ep{};
  ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                  UCP_EP_PARAM_FIELD_ERR_HANDLER;
  ep.address = reinterpret_cast<const ucp_address_t*>(peerAddress.data());
  ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  ep.err_handler.cb = &UcxLink::onEndpointError;
  ep.err_handler.arg = l->x_.get();
  ucs_status_t st = ucp_ep_create(l->worker_->handle(), &ep, &l->ep_);
  if (st == UCS_ERR_UNREACHABLE) {
    // UCX's shared-memory transports report no peer failure, and refuse to connect where asked
    // to: there a dead peer shows as the communicator's timeout.
    ep.err_mode = UCP_ERR_HANDLING_MODE_NONE;
    st = ucp_ep_create(l->worker_->handle(), &ep, &l->ep_);
    if (st == UCS_OK) {
      WEFT_INFO(kNet,
                "ucx: rank %d's failures show only as timeouts (no UCX transport to it "
                "reports them)",
                peer);
    }
  }
  if (st != UCS_OK) {
    return ucxError(weftRemoteError, strprintf("connecting to rank %d", peer).c_str(), st);
  }
  ucp_worker_h w = l->worker_->handle();
  WEFT_RETURN_IF_ERROR(
      l->helloReceive_.post(w, &l->x_->hello, sizeof(Hello), tagOf(Kind::kHello, peer)));
  WEFT_RETURN_IF_ERROR(
      l->creditReceive_.post(w, &l->x_->creditIn, sizeof(uint64_t), tagOf(Kind::kCredit, peer)));
  WEFT_RETURN_IF_ERROR(
      l->goodbyeReceive_.post(w, &l->x_->goodbye, sizeof(Goodbye), tagOf(Kind::kGoodbye, peer)));
  l->x_->myHello = makeHello(ctx, peer);
  WEFT_RETURN_IF_ERROR(
      l->send(tagOf(Kind::kHello, ctx.rank), &l->x_->myHello, sizeof(Hello), false));
  WEFT_RETURN_IF_ERROR(l->postData());
  *out = std::move(l);
  return okStatus();
}

UcxLink::~UcxLink() {
  std::lock_guard<std::mutex> lock(worker_->mutex());
  finish();
  // Receives still posted are cancelled, and waited for: one already under way writes on.
  std::vector<Receive*> receives = {&helloReceive_, &creditReceive_, &goodbyeReceive_};
  for (Receive& r : dataReceives_)
    receives.push_back(&r);
  for (Receive* r : receives)
    r->cancel(worker_->handle());
  const auto until = std::chrono::steady_clock::now() + kFlushTime;
  bool released = false;
  while (!released && std::chrono::steady_clock::now() < until) {
    worker_->progress();
    released = true;
    for (Receive* r : receives)
      released = (!r->posted() || r->test()) && released;
  }
  if (!clean_ || !released) {
    // UCX still holds requests into x_ (and calls back into it): leave it, and the worker it
    // holds, to the end of the process rather than free them under UCX.
    worker_->abandon();
    (void)x_.release();
  }
}

void UcxLink::onEndpointError(void* arg, ucp_ep_h, ucs_status_t status) {
  auto* x = static_cast<Exposed*>(arg);
  if (x->epError.ok()) {
    x->epError =
        ucxError(weftRemoteError, strprintf("ucx link to rank %d broke", x->peer).c_str(), status);
  }
}

Status UcxLink::send(uint64_t tag, const void* data, size_t bytes, bool credit) {
  if (ep_ == nullptr) return errorf(weftRemoteError, "ucx link to rank %d was closed here", peer_);
  ucp_request_param_t p{};
  p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  p.cb.send = credit ? &UcxLink::onCreditSent : &UcxLink::onSent;
  p.user_data = x_.get();
  void* r = ucp_tag_send_nbx(ep_, data, bytes, tag, &p);
  if (UCS_PTR_IS_ERR(r)) {
    return ucxError(weftRemoteError, strprintf("sending to rank %d", peer_).c_str(),
                    UCS_PTR_STATUS(r));
  }
  if (r == nullptr) return okStatus();  // done already; no callback comes
  ++x_->unfinished;
  if (credit) x_->creditInFlight = true;
  worker_->sendStarted();
  return okStatus();
}

// UCX calls these from a progress call, under the worker's mutex.
void UcxLink::onSent(void* request, ucs_status_t status, void* user) {
  auto* x = static_cast<Exposed*>(user);
  --x->unfinished;
  x->worker->sendFinished();
  ucp_request_free(request);
  if (status != UCS_OK && x->epError.ok()) {
    x->epError =
        ucxError(weftRemoteError, strprintf("sending to rank %d", x->peer).c_str(), status);
  }
}

void UcxLink::onCreditSent(void* request, ucs_status_t status, void* user) {
  static_cast<Exposed*>(user)->creditInFlight = false;
  onSent(request, status, user);
}

// Posts a receive at the start of every unit whose part of the ring the reader has freed. Each
// unit's first byte starts a message, so these receives wait at the right positions however far
// ahead; where a message in a unit comes shorter than the unit, settleData() posts the next one
// at its end, once received_ gets there.
Status UcxLink::postData() {
  while (!closed_ && nextUnit_ + kUnit <= consumed_ + kWindow) {
    Receive& r = dataReceives_[slotOf(nextUnit_)];
    char* at = reinterpret_cast<char*>(x_->ring.get()) + nextUnit_ % kWindow;
    WEFT_RETURN_IF_ERROR(
        r.post(worker_->handle(), at, kUnit, tagOf(Kind::kData, peer_, nextUnit_)));
    nextUnit_ += kUnit;
  }
  return settleData();
}

// Takes in what arrived in order from received_; the units after the one in progress wait.
Status UcxLink::settleData() {
  while (received_ < nextUnit_) {
    Receive& r = dataReceives_[slotOf(received_)];
    if (!r.test()) return okStatus();
    r.reset();
    if (r.status() != UCS_OK) {
      // A message longer than the room posted for it comes as a truncation: a sender that broke
      // the credit rule.
      fatal_ =
          ucxError(weftRemoteError, strprintf("receiving from rank %d", peer_).c_str(), r.status());
      return fatal_;
    }
    if (r.length() == 0) {  // a sender never sends one: the unit would wait for nothing
      fatal_ = errorf(weftRemoteError, "ucx link to rank %d: an empty data message", peer_);
      return fatal_;
    }
    received_ += r.length();
    const size_t inUnit = static_cast<size_t>(received_ % kUnit);
    if (inUnit != 0 && !closed_) {  // the unit goes on: its next message starts here
      char* at = reinterpret_cast<char*>(x_->ring.get()) + received_ % kWindow;
      WEFT_RETURN_IF_ERROR(
          r.post(worker_->handle(), at, kUnit - inUnit, tagOf(Kind::kData, peer_, received_)));
    }
  }
  return okStatus();
}

Status UcxLink::settleCredit() {
  if (!creditReceive_.test()) return okStatus();
  creditReceive_.reset();
  if (creditReceive_.status() != UCS_OK) {
    fatal_ = ucxError(weftRemoteError, strprintf("receiving from rank %d", peer_).c_str(),
                      creditReceive_.status());
    return fatal_;
  }
  // Credits may come out of order too: a stale one changes nothing.
  if (creditReceive_.length() != sizeof(uint64_t) || x_->creditIn > sent_) {
    fatal_ =
        errorf(weftRemoteError,
               "ucx link to rank %d: a credit for %llu bytes, with %llu sent and %llu acked", peer_,
               static_cast<unsigned long long>(x_->creditIn),
               static_cast<unsigned long long>(sent_), static_cast<unsigned long long>(acked_));
    return fatal_;
  }
  acked_ = std::max(acked_, x_->creditIn);
  return creditReceive_.post(worker_->handle(), &x_->creditIn, sizeof(uint64_t),
                             tagOf(Kind::kCredit, peer_));
}

// Tells the peer what has been consumed, once enough has since the last credit and the last
// credit's send is done (its buffer is reused).
Status UcxLink::sendCredit() {
  if (consumed_ - creditSent_ < kCreditEvery || x_->creditInFlight) return okStatus();
  x_->creditOut = consumed_;
  creditSent_ = consumed_;
  return send(tagOf(Kind::kCredit, ctx_.rank), &x_->creditOut, sizeof(uint64_t), true);
}

Status UcxLink::pump() {
  if (closeRequested_.load() && !closed_) finish();
  if (closed_) return errorf(weftRemoteError, "ucx link to rank %d was closed here", peer_);
  WEFT_RETURN_IF_ERROR(fatal_);
  for (int i = 0; i < 16 && worker_->progress(); ++i) {
  }
  // A failed send or a broken endpoint leaves what already arrived readable (x_->epError); a
  // peer that breaks the protocol fails the link at once.
  // A settled credit reposts at once, and may find the next one there already.
  for (int i = 0; i < 4 && creditReceive_.posted() && creditReceive_.test(); ++i)
    WEFT_RETURN_IF_ERROR(settleCredit());
  WEFT_RETURN_IF_ERROR(settleData());
  WEFT_RETURN_IF_ERROR(postData());
  if (!peerGone_ && goodbyeReceive_.posted() && goodbyeReceive_.test()) {
    peerGone_ = goodbyeReceive_.status() == UCS_OK && goodbyeReceive_.length() == sizeof(Goodbye);
    goodbyeReceive_.reset();
    if (peerGone_ && x_->goodbye.farewellOrigin >= 0) {
      std::lock_guard<std::mutex> lock(farewellMutex_);
      farewellIn_.origin = x_->goodbye.farewellOrigin;
      farewellIn_.message.assign(x_->goodbye.farewell,
                                 std::min<size_t>(x_->goodbye.farewellBytes, kFarewellBytes));
    }
  }
  if (x_->epError.ok()) WEFT_RETURN_IF_ERROR(sendCredit());
  return okStatus();
}

// The peer's end: its goodbye came and everything it sent before has arrived, or the endpoint
// broke. Ok while there is none.
Status UcxLink::peerEnd() const {
  if (peerGone_ && received_ >= x_->goodbye.streamBytes) {
    std::lock_guard<std::mutex> lock(farewellMutex_);
    return farewellError(
        peer_, farewellIn_,
        errorf(weftRemoteError, "ucx link to rank %d was closed by the peer", peer_));
  }
  return x_->epError;
}

void UcxLink::sayFarewell(const Farewell& why) {
  std::lock_guard<std::mutex> lock(farewellMutex_);
  if (farewellOut_.origin < 0) farewellOut_ = why;
}

Farewell UcxLink::receivedFarewell() {
  std::lock_guard<std::mutex> lock(farewellMutex_);
  return farewellIn_;
}

Status UcxLink::helloDone(bool* done) {
  std::lock_guard<std::mutex> lock(worker_->mutex());
  *done = false;
  WEFT_RETURN_IF_ERROR(pump());
  if (helloChecked_) {
    *done = true;
    return okStatus();
  }
  if (!helloReceive_.test()) return okStatus();
  if (helloReceive_.status() != UCS_OK) {
    return ucxError(weftRemoteError, strprintf("receiving rank %d's hello", peer_).c_str(),
                    helloReceive_.status());
  }
  const size_t length = helloReceive_.length();
  const std::string problem = helloProblem(x_->hello, length, ctx_, peer_);
  if (!problem.empty()) {
    return errorf(weftRemoteError, "ucx: refused rank %d's connection: %s", peer_, problem.c_str());
  }
  helloChecked_ = true;
  *done = true;
  return okStatus();
}

Status UcxLink::write(const void* data, size_t bytes, size_t* written) {
  std::lock_guard<std::mutex> lock(worker_->mutex());
  *written = 0;
  WEFT_RETURN_IF_ERROR(pump());
  WEFT_RETURN_IF_ERROR(peerEnd());
  const char* from = static_cast<const char*>(data);
  while (*written < bytes) {
    const size_t window = kWindow - static_cast<size_t>(sent_ - acked_);
    const size_t toUnitEnd = kUnit - static_cast<size_t>(sent_ % kUnit);
    const size_t n = std::min({bytes - *written, window, toUnitEnd});
    if (n == 0) break;  // the peer has a window's worth unconsumed
    char* at = reinterpret_cast<char*>(x_->sendRing.get()) + sent_ % kWindow;
    memcpy(at, from + *written, n);
    WEFT_RETURN_IF_ERROR(send(tagOf(Kind::kData, ctx_.rank, sent_), at, n, false));
    sent_ += n;
    *written += n;
  }
  return okStatus();
}

Status UcxLink::peek(const void** data, size_t* bytes) {
  std::lock_guard<std::mutex> lock(worker_->mutex());
  *bytes = 0;
  WEFT_RETURN_IF_ERROR(pump());
  const size_t available = static_cast<size_t>(received_ - consumed_);
  if (available == 0) return peerEnd();
  const size_t offset = static_cast<size_t>(consumed_ % kWindow);
  *data = reinterpret_cast<const char*>(x_->ring.get()) + offset;
  *bytes = std::min(available, kWindow - offset);
  return okStatus();
}

void UcxLink::consume(size_t bytes) {
  std::lock_guard<std::mutex> lock(worker_->mutex());
  consumed_ += bytes;
  if (closed_) return;
  // A full ring has no receive posted: post it now that there is room, and give credit.
  Status ignored = postData();
  ignored = sendCredit();  // an error here surfaces at the next call
  (void)ignored;
}

Status UcxLink::checkPeer() {
  std::lock_guard<std::mutex> lock(worker_->mutex());
  WEFT_RETURN_IF_ERROR(pump());
  return consumed_ == received_ ? peerEnd() : okStatus();
}

void UcxLink::finish() {
  if (closed_ || ep_ == nullptr) return;
  closed_ = true;
  auto progressUntil = [this](auto done) {
    const auto until = std::chrono::steady_clock::now() + kFlushTime;
    while (!done() && std::chrono::steady_clock::now() < until)
      worker_->progress();
    return done();
  };
  if (x_->epError.ok()) {
    x_->myGoodbye.streamBytes = sent_;
    {
      std::lock_guard<std::mutex> lock(farewellMutex_);
      const size_t n = std::min(farewellOut_.message.size(), kFarewellBytes);
      x_->myGoodbye.farewellOrigin = farewellOut_.origin;
      x_->myGoodbye.farewellBytes = static_cast<uint32_t>(n);
      memcpy(x_->myGoodbye.farewell, farewellOut_.message.data(), n);
    }
    Status ignored = send(tagOf(Kind::kGoodbye, ctx_.rank), &x_->myGoodbye, sizeof(Goodbye), false);
    (void)ignored;  // the peer learns of the end from its endpoint then
  }
  const bool sentAll = progressUntil([this] { return x_->unfinished == 0; });
  // Flushing delivers what was sent; forcing (after an error, or sends that would not finish)
  // completes what is left with an error. UCX cancels no send otherwise.
  ucp_request_param_t cp{};
  cp.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  cp.flags = sentAll && x_->epError.ok() ? 0 : UCP_EP_CLOSE_FLAG_FORCE;
  void* closing = ucp_ep_close_nbx(ep_, &cp);
  ep_ = nullptr;
  const bool closedOk = progressUntil([this, closing] {
    return x_->unfinished == 0 &&
           (!UCS_PTR_IS_PTR(closing) || ucp_request_check_status(closing) != UCS_INPROGRESS);
  });
  if (UCS_PTR_IS_PTR(closing) && ucp_request_check_status(closing) != UCS_INPROGRESS) {
    ucp_request_free(closing);
  }
  clean_ = closedOk;  // else the destructor leaves x_ and the worker to UCX
}

}  // namespace weft::ucx
