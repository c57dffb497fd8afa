// UcxWorker: a UCP context and worker, shared by the UCX links of one communicator. Every use of
// the worker holds its mutex (it is made for one thread at a time). A sender whose call has
// returned may still owe UCX progress for what it sent (over shared memory, a message goes in
// fragments as the peer frees room), and a peer's connection needs an answer while this rank
// waits elsewhere (a bootstrap barrier): a pusher thread drives the worker meanwhile, so bytes a
// link took are delivered without further calls, as a socket's are.
#pragma once

#include <ucp/api/ucp.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "src/base/status.h"

namespace weft::ucx {

class UcxWorker {
 public:
  // Reads UCX's own configuration (UCX_TLS, UCX_NET_DEVICES, ...) from the environment.
  static Status create(std::shared_ptr<UcxWorker>* out);
  ~UcxWorker();
  UcxWorker(const UcxWorker&) = delete;
  UcxWorker& operator=(const UcxWorker&) = delete;

  // The address peers connect to, as bytes to exchange.
  const std::vector<uint8_t>& address() const { return address_; }
  ucp_worker_h handle() const { return worker_; }
  // Drives UCX's communication; true if anything happened. The caller holds mutex().
  bool progress() { return ucp_worker_progress(worker_) != 0; }
  std::mutex& mutex() { return mutex_; }
  // A send that UCX has not finished starts or ends: the pusher polls while any is open.
  void sendStarted();
  void sendFinished() { unfinished_.fetch_sub(1); }
  // Leaves the worker and context to the end of the process: an endpoint did not close in
  // time, and UCX aborts where a worker is destroyed under its requests.
  void abandon();

 private:
  UcxWorker() = default;
  void push();

  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  std::vector<uint8_t> address_;
  bool abandoned_ = false;
  std::mutex mutex_;
  std::atomic<int> unfinished_{0};
  std::mutex pusherMutex_;
  bool stop_ = false;  // under pusherMutex_
  std::thread pusher_;
};

// "UCX: <what>: <UCX's words>" as a status.
Status ucxError(weftResult_t code, const char* what, ucs_status_t status);

}  // namespace weft::ucx
