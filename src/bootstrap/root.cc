#include "src/bootstrap/root.h"

#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "src/base/log.h"
#include "src/bootstrap/unique_id.h"

namespace weft {
namespace {

constexpr int64_t kHelloTimeoutMs = 2000;  // a silent stranger holds the root this long at most

struct Arrival {
  Socket socket;
  RootHello hello;
};

class Root {
 public:
  Root(Socket listener, const Secret& secret, uint64_t commTag, int64_t timeoutMs)
      : listener_(std::move(listener)),
        secret_(secret),
        commTag_(commTag),
        deadline_(Deadline::after(timeoutMs)) {}

  void run() {
    Status s = gather();
    if (s.ok()) {
      s = distribute();
    } else {
      replyError(s);
    }
    if (!s.ok()) WEFT_WARN(kBootstrap, "bootstrap root: %s", s.message().c_str());
  }

 private:
  Status gather() {
    while (nranks_ == 0 || static_cast<int>(arrivals_.size()) < nranks_) {
      Socket s;
      SockAddr from;
      WEFT_RETURN_IF_ERROR(acceptSocket(listener_, deadline_, nullptr, &s, &from)
                               .withContext(strprintf("waiting for ranks (%zu of %d arrived)",
                                                      arrivals_.size(), nranks_)));
      RootHello hello;
      Status r = recvAll(s, &hello, sizeof(hello), deadline_.capped(kHelloTimeoutMs), nullptr);
      if (r.ok()) r = validate(hello);
      if (!r.ok()) {
        WEFT_WARN(kBootstrap, "bootstrap root: refused a connection from %s: %s",
                  from.toString().c_str(), r.message().c_str());
        continue;
      }
      if (r = admit(hello); !r.ok()) return r;
      arrivals_.push_back({std::move(s), hello});
    }
    return okStatus();
  }

  Status validate(const RootHello& h) const {
    if (h.magic != kBootstrapMagic) return Status(weftInvalidUsage, "not a Weft bootstrap hello");
    if (h.version != kBootstrapVersion) {
      return errorf(weftInvalidUsage, "bootstrap version %u, expected %u", h.version,
                    kBootstrapVersion);
    }
    if (h.secret != secret_ || h.commTag != commTag_) {
      return Status(weftInvalidUsage, "wrong secret or communicator");
    }
    if (h.nranks <= 0 || h.rank < 0 || h.rank >= h.nranks) {
      return errorf(weftInvalidUsage, "rank %d of %d is out of range", h.rank, h.nranks);
    }
    return okStatus();
  }

  // Errors here are the ranks' mistakes and end the rendezvous for everyone.
  Status admit(const RootHello& h) {
    if (nranks_ == 0) {
      nranks_ = h.nranks;
      table_.resize(static_cast<size_t>(nranks_));
      seen_.assign(static_cast<size_t>(nranks_), false);
    }
    if (h.nranks != nranks_) {
      return errorf(weftInvalidUsage, "rank %d says there are %d ranks, others said %d", h.rank,
                    h.nranks, nranks_);
    }
    if (seen_[h.rank]) return errorf(weftInvalidUsage, "two processes claim rank %d", h.rank);
    seen_[h.rank] = true;
    table_[h.rank] = h.info;
    return okStatus();
  }

  Status distribute() {
    RootReply reply;
    reply.nranks = nranks_;
    for (auto& a : arrivals_) {
      WEFT_RETURN_IF_ERROR(sendAll(a.socket, &reply, sizeof(reply), deadline_, nullptr));
      WEFT_RETURN_IF_ERROR(
          sendAll(a.socket, table_.data(), table_.size() * sizeof(RankInfo), deadline_, nullptr));
    }
    return okStatus();
  }

  void replyError(const Status& s) {
    RootReply reply;
    reply.status = s.code();
    snprintf(reply.message, sizeof(reply.message), "%s", s.message().c_str());
    for (auto& a : arrivals_) {
      Status ignored = sendAll(a.socket, &reply, sizeof(reply), Deadline::after(1000), nullptr);
      (void)ignored;
    }
  }

  Socket listener_;
  Secret secret_;
  uint64_t commTag_;
  Deadline deadline_;
  int nranks_ = 0;
  std::vector<RankInfo> table_;
  std::vector<bool> seen_;
  std::vector<Arrival> arrivals_;
};

}  // namespace

Status startRoot(const SockAddr& address, const Secret& secret, uint64_t commTag, int64_t timeoutMs,
                 SockAddr* bound) {
  Socket listener;
  WEFT_RETURN_IF_ERROR(listenSocket(address, &listener, bound));
  WEFT_INFO(kBootstrap, "bootstrap root listening on %s", bound->toString().c_str());
  std::thread([root = std::make_shared<Root>(std::move(listener), secret, commTag, timeoutMs)] {
    root->run();
  }).detach();
  return okStatus();
}

}  // namespace weft

namespace weft {

Status newRendezvous(int64_t timeoutMs, UniqueIdData* out) {
  NetInterface ni;
  WEFT_RETURN_IF_ERROR(defaultInterface(&ni));
  SockAddr address = ni.address;
  address.setPort(0);
  UniqueIdData id;
  WEFT_RETURN_IF_ERROR(randomBytes(id.secret.data(), id.secret.size()));
  WEFT_RETURN_IF_ERROR(randomBytes(&id.commTag, sizeof(id.commTag)));
  SockAddr bound;
  WEFT_RETURN_IF_ERROR(startRoot(address, id.secret, id.commTag, timeoutMs, &bound));
  id.root = WireAddress::from(bound);
  *out = id;
  return okStatus();
}

}  // namespace weft
