#include "src/bootstrap/root.h"

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "src/base/log.h"
#include "src/bootstrap/hello_gate.h"
#include "src/bootstrap/unique_id.h"

namespace weft {
namespace {

struct Arrival {
  Socket socket;
  RootHello hello;
};

class Root {
 public:
  Root(Socket listener, const Secret& secret, uint64_t commTag, int64_t timeoutMs, int nranks)
      : listener_(std::move(listener)),
        secret_(secret),
        commTag_(commTag),
        deadline_(Deadline::after(timeoutMs)),
        expected_(nranks) {}

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
    HelloGate gate(listener_, sizeof(RootHello));
    while (nranks_ == 0 || static_cast<int>(arrivals_.size()) < nranks_) {
      Socket s;
      SockAddr from;
      RootHello hello;
      WEFT_RETURN_IF_ERROR(gate.next(deadline_, nullptr, &s, &from, &hello)
                               .withContext(strprintf("waiting for ranks (%zu of %d arrived)",
                                                      arrivals_.size(), nranks_)));
      Status r = validate(hello);
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
    if (expected_ > 0 && h.nranks != expected_) {
      return errorf(weftInvalidUsage, "it says there are %d ranks; the launch has %d", h.nranks,
                    expected_);
    }
    return okStatus();
  }

  // Errors here are the ranks' mistakes and end the rendezvous for everyone.
  // Memory grows with the ranks that arrived, never with the count a hello claims.
  Status admit(const RootHello& h) {
    if (nranks_ == 0) nranks_ = h.nranks;
    if (h.nranks != nranks_) {
      return errorf(weftInvalidUsage, "rank %d says there are %d ranks, others said %d", h.rank,
                    h.nranks, nranks_);
    }
    if (!arrived_.emplace(h.rank, h.info).second) {
      return errorf(weftInvalidUsage, "two processes claim rank %d", h.rank);
    }
    return okStatus();
  }

  Status distribute() {
    RootReply reply;
    reply.nranks = nranks_;
    std::vector<RankInfo> table;
    table.reserve(arrived_.size());
    for (const auto& [rank, info] : arrived_)  // every rank 0..nranks-1, in order
      table.push_back(info);
    for (auto& a : arrivals_) {
      WEFT_RETURN_IF_ERROR(sendAll(a.socket, &reply, sizeof(reply), deadline_, nullptr));
      WEFT_RETURN_IF_ERROR(
          sendAll(a.socket, table.data(), table.size() * sizeof(RankInfo), deadline_, nullptr));
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
  int expected_;  // the launch's world size; 0 where the first hello sets nranks_
  int nranks_ = 0;
  std::map<int, RankInfo> arrived_;
  std::vector<Arrival> arrivals_;
};

}  // namespace

Status startRoot(const SockAddr& address, const Secret& secret, uint64_t commTag, int64_t timeoutMs,
                 int nranks, SockAddr* bound) {
  Socket listener;
  WEFT_RETURN_IF_ERROR(listenSocket(address, &listener, bound));
  WEFT_INFO(kBootstrap, "bootstrap root listening on %s", bound->toString().c_str());
  std::thread([root = std::make_shared<Root>(std::move(listener), secret, commTag, timeoutMs,
                                             nranks)] {
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
  WEFT_RETURN_IF_ERROR(startRoot(address, id.secret, id.commTag, timeoutMs, 0, &bound));
  id.root = WireAddress::from(bound);
  *out = id;
  return okStatus();
}

}  // namespace weft
