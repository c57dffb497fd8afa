#include "src/enqueue/recv_any.h"

#include "collectives/datatype.h"
#include "src/base/text.h"
#include "src/comm/communicator.h"
#include "transports/channel.h"

namespace weft {

RecvAnySource::RecvAnySource(Communicator& comm, const Op& op) : comm_(comm), op_(op) {
  waitingOn_.reserve(static_cast<size_t>(comm_.nranks()));
}

Status RecvAnySource::probe(bool* found) {
  *found = false;
  waitingOn_.clear();
  // From the next rank up (the first to send to this one is not always the one taken).
  for (int i = 1; i < comm_.nranks(); ++i) {
    const int p = (comm_.rank() + i) % comm_.nranks();
    const MessageHeader* header = nullptr;
    Status s = comm_.channels()[p]->peekHeader(&header);
    if (!s.ok()) return s.withContext(strprintf("receiving from rank %d", p));
    // A peer whose next message is a collective's has nothing for us before it: a wait on its
    // link, whose payload is there to read, would return at once.
    if (header == nullptr) waitingOn_.emplace_back(p, true);
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
  for (int p = 0; p < comm_.nranks(); ++p) {
    if (p != comm_.rank()) out.push_back(p);
  }
  return out;
}

const std::vector<std::pair<int, bool>>& RecvAnySource::pendingIo() {
  return source_ >= 0 ? receive_.pendingIo() : waitingOn_;
}

}  // namespace weft
