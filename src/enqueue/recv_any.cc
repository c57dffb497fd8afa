#include "src/enqueue/recv_any.h"

#include "collectives/datatype.h"
#include "src/base/text.h"
#include "src/comm/communicator.h"
#include "transports/channel.h"

namespace weft {

RecvAnySource::RecvAnySource(Communicator& comm, const Op& op) : comm_(comm), op_(op) {
  for (int p = 0; p < comm_.nranks(); ++p) {
    if (p != comm_.rank()) anyPeer_.emplace_back(p, true);
  }
}

Status RecvAnySource::probe(bool* found) {
  *found = false;
  // From the next rank up, so that no rank is always looked at first.
  for (int i = 1; i < comm_.nranks(); ++i) {
    const int p = (comm_.rank() + i) % comm_.nranks();
    const MessageHeader* header = nullptr;
    Status s = comm_.channels()[p]->peekHeader(&header);
    if (!s.ok()) return s.withContext(strprintf("receiving from rank %d", p));
    if (header == nullptr || (header->flags & kPointToPointMessage) == 0) continue;
    Schedule schedule;
    schedule.pointToPoint = true;
    schedule.recv(p, Ref{kRecvBuf, 0}, op_.count);
    std::vector<BufferView> buffers(3);
    buffers[kRecvBuf] = BufferView{static_cast<char*>(op_.recvbuff), op_.count, typeSize(op_.type)};
    WEFT_RETURN_IF_ERROR(
        receive_.start(schedule, std::move(buffers), nullptr, comm_.channels(), comm_.nranks()));
    source_ = p;
    *found = true;
    return okStatus();
  }
  return okStatus();
}

Status RecvAnySource::progress(bool* progressed) {
  *progressed = false;
  if (source_ < 0) {
    WEFT_RETURN_IF_ERROR(probe(progressed));
    if (source_ < 0) return okStatus();
  }
  bool moved = false;
  WEFT_RETURN_IF_ERROR(receive_.progress(&moved));
  *progressed = *progressed || moved;
  if (receive_.done()) *op_.source = source_;
  return okStatus();
}

std::string RecvAnySource::describeWait() const {
  if (source_ >= 0) return receive_.describeWait();
  return strprintf("a receive of %zu bytes from any rank (no point-to-point message has come)",
                   op_.count * typeSize(op_.type));
}

std::vector<int> RecvAnySource::pendingPeers() const {
  if (source_ >= 0) return receive_.pendingPeers();
  std::vector<int> out;
  for (const auto& [peer, forRead] : anyPeer_)
    out.push_back(peer);
  return out;
}

const std::vector<std::pair<int, bool>>& RecvAnySource::pendingIo() {
  return source_ >= 0 ? receive_.pendingIo() : anyPeer_;
}

}  // namespace weft
