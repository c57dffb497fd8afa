#include "transports/ucx/ucx_transport.h"

#include "src/base/log.h"
#include "src/base/wait.h"
#include "transports/ucx/ucx_link.h"
#include "transports/ucx/ucx_worker.h"

namespace weft::ucx {

Status connect(const TransportContext& ctx, const std::vector<int>& peers,
               std::vector<std::unique_ptr<Link>>* links) {
  links->clear();
  std::shared_ptr<UcxWorker> worker;
  Status local = peers.empty() ? okStatus() : UcxWorker::create(&worker);
  // Gather even after a local failure, so the others are not left waiting in the all-gather.
  std::vector<Blob> all;
  WEFT_RETURN_IF_ERROR(ctx.allGather(worker ? worker->address() : Blob(), &all)
                           .withContext("ucx: exchanging worker addresses"));
  WEFT_RETURN_IF_ERROR(local.withContext("ucx"));
  if (all.size() != static_cast<size_t>(ctx.nranks)) {
    return errorf(weftInternalError, "ucx: all-gather returned %zu blobs for %d ranks", all.size(),
                  ctx.nranks);
  }
  std::vector<std::unique_ptr<UcxLink>> made;
  for (int p : peers) {
    if (p < 0 || p >= ctx.nranks || p == ctx.rank) {
      return errorf(weftInternalError, "ucx: bad peer %d on rank %d", p, ctx.rank);
    }
    if (all[p].empty()) {
      return errorf(weftRemoteError, "ucx: rank %d has no UCX worker (it failed to set UCX up)", p);
    }
    made.emplace_back();
    WEFT_RETURN_IF_ERROR(UcxLink::create(ctx, worker, p, all[p], &made.back()));
  }
  // Every link's hello, checked, before any carries data.
  Backoff backoff;
  for (size_t done = 0; done < made.size();) {
    done = 0;
    for (auto& l : made) {
      bool ok = false;
      WEFT_RETURN_IF_ERROR(l->helloDone(&ok));
      done += ok ? 1 : 0;
    }
    if (done == made.size()) break;
    if (ctx.abort != nullptr && ctx.abort->load()) {
      return abortedStatus().withContext("ucx: connecting");
    }
    if (ctx.deadline.expired()) {
      return errorf(weftTimeout, "ucx: timed out waiting for %zu of %zu peers' hellos",
                    made.size() - done, made.size());
    }
    backoff.pause();
  }
  for (auto& l : made)
    links->push_back(std::move(l));
  WEFT_INFO(kNet, "ucx: connected to %zu peers", peers.size());
  return okStatus();
}

}  // namespace weft::ucx
