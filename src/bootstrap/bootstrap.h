// Bootstrap: how the ranks of a communicator first meet (through the root named in the unique
// id), and the ring of sockets they keep for small all-gathers and barriers during setup.
#pragma once

#include <memory>
#include <vector>

#include "src/base/blob.h"
#include "src/base/socket.h"
#include "src/base/status.h"
#include "src/bootstrap/unique_id.h"
#include "src/bootstrap/wire.h"

namespace weft {

class Bootstrap {
 public:
  struct Options {
    int rank = 0;
    int nranks = 1;
    SockAddr localAddress;  // where this rank listens (port 0)
    int64_t timeoutMs = 0;
    const AbortFlag* abort = nullptr;
    uint32_t locality = 0;  // told to the other ranks
  };

  // Meets all ranks; returns when every rank is known and the ring is connected.
  static Status create(const UniqueIdData& id, const Options& options,
                       std::unique_ptr<Bootstrap>* out);

  int rank() const { return options_.rank; }
  int nranks() const { return options_.nranks; }
  const std::vector<RankInfo>& ranks() const { return ranks_; }
  const RankInfo& self() const { return ranks_[options_.rank]; }

  // Every rank passes its blob and gets all of them, indexed by rank.
  Status allGather(const Blob& mine, std::vector<Blob>* all);
  Status barrier();
  // Shuts the ring down so peers blocked on it return at once.
  void shutdown();

 private:
  explicit Bootstrap(const Options& options) : options_(options) {}
  Status meetAtRoot(const UniqueIdData& id, const RankInfo& mine);
  Status connectRing(const UniqueIdData& id);
  Deadline deadline() const { return Deadline::after(options_.timeoutMs); }

  Options options_;
  Socket listener_;
  Socket next_;
  Socket prev_;
  std::vector<RankInfo> ranks_;
};

}  // namespace weft
