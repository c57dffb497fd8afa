// RecvAnySource: a receive from whichever rank sends first (weftRecvAnySource). It waits until
// some peer's next message is a point-to-point send, then receives that message as a plain
// receive from that peer. Each link is ordered, so a peer whose next message belongs to a
// collective cannot have sent to us before it, and is passed over.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "collectives/executor.h"
#include "collectives/progressable.h"
#include "src/base/status.h"
#include "src/enqueue/op.h"

namespace weft {

class RecvAnySource : public Progressable {
 public:
  // op: a receive with peer kAnySource, whose sender's rank goes to *op.source once it is done.
  RecvAnySource(Communicator& comm, const Op& op);

  Status progress(bool* progressed) override;
  bool done() const override { return source_ >= 0 && receive_.done(); }
  std::string describeWait() const override;
  std::vector<int> pendingPeers() const override;
  const std::vector<std::pair<int, bool>>& pendingIo() override;

 private:
  // Looks for a peer whose next message is a point-to-point one, and starts receiving it.
  Status probe(bool* found);

  Communicator& comm_;
  Op op_;
  int source_ = -1;  // -1 until a sender is found
  Executor receive_;
  // pendingIo while probing: a read from each peer whose next header has not come yet.
  std::vector<std::pair<int, bool>> waitingOn_;
};

}  // namespace weft
