#include "transports/ucx/ucx_worker.h"

#include <chrono>
#include <cstdlib>
#include <cstring>

namespace weft::ucx {

Status ucxError(weftResult_t code, const char* what, ucs_status_t status) {
  return errorf(code, "UCX: %s: %s", what, ucs_status_string(status));
}

Status UcxWorker::create(std::shared_ptr<UcxWorker>* out) {
  std::shared_ptr<UcxWorker> w(new UcxWorker());
  ucp_config_t* config = nullptr;
  ucs_status_t st = ucp_config_read(nullptr, nullptr, &config);
  if (st != UCS_OK) return ucxError(weftSystemError, "reading its configuration", st);
  // Links send messages of 64K at most, eagerly: with the rendezvous protocol over UCX's tcp,
  // exchanges of several messages each way stalled (UCX 1.13). UCX_RNDV_THRESH still rules.
  if (getenv("UCX_RNDV_THRESH") == nullptr) ucp_config_modify(config, "RNDV_THRESH", "inf");
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = UCP_FEATURE_TAG;  // RMA joins here with memory windows
  st = ucp_init(&params, config, &w->context_);
  ucp_config_release(config);
  if (st != UCS_OK) return ucxError(weftSystemError, "initialising", st);
  ucp_worker_params_t wp{};
  wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;
  st = ucp_worker_create(w->context_, &wp, &w->worker_);
  if (st != UCS_OK) return ucxError(weftSystemError, "creating a worker", st);
  ucp_address_t* address = nullptr;
  size_t length = 0;
  st = ucp_worker_get_address(w->worker_, &address, &length);
  if (st != UCS_OK) return ucxError(weftSystemError, "reading the worker's address", st);
  w->address_.resize(length);
  memcpy(w->address_.data(), address, length);
  ucp_worker_release_address(w->worker_, address);
  UcxWorker* raw = w.get();
  w->pusher_ = std::thread([raw] { raw->push(); });
  *out = std::move(w);
  return okStatus();
}

void UcxWorker::sendStarted() {
  unfinished_.fetch_add(1);
}

// Drives the worker when nobody else does: every 50 us while a send is unfinished, else every
// millisecond (a peer's connection needs an answer while this rank waits elsewhere, say).
void UcxWorker::push() {
  constexpr auto kBusyPause = std::chrono::microseconds(50);
  constexpr auto kIdlePause = std::chrono::milliseconds(1);
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(pusherMutex_);
      if (stop_) return;
    }
    {
      std::lock_guard<std::mutex> worker(mutex_);
      while (progress()) {
      }
    }
    std::this_thread::sleep_for(unfinished_.load() > 0 ? kBusyPause : kIdlePause);
  }
}

void UcxWorker::abandon() {
  abandoned_ = true;
}

UcxWorker::~UcxWorker() {
  if (pusher_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(pusherMutex_);
      stop_ = true;
    }
    pusher_.join();  // within a millisecond
  }
  if (abandoned_) return;
  if (worker_ != nullptr) ucp_worker_destroy(worker_);
  if (context_ != nullptr) ucp_cleanup(context_);
}

}  // namespace weft::ucx
