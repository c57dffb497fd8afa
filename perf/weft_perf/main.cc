// weft-perf: nccl-tests compatible benchmark over the public API. See options.cc.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "perf/weft_perf/bench.h"
#include "perf/weft_perf/options.h"
#include "perf/weft_perf/report.h"
#include "weft/weft.h"

namespace {

using weft::perf::checkWeft;

// Rank 0 prints every rank's line, in rank order: gathered with weft itself.
std::string gatherRankLines(weftComm_t comm, int rank, int nranks) {
  constexpr size_t kLine = 256;
  char host[128] = {};
  ::gethostname(host, sizeof host - 1);
  std::string mine = weft::perf::rankLine(rank, static_cast<int>(::getpid()), host);
  std::vector<char> line(kLine, 0), all(kLine * static_cast<size_t>(nranks), 0);
  std::memcpy(line.data(), mine.data(), std::min(mine.size(), kLine - 1));
  checkWeft(weftAllGather(line.data(), all.data(), kLine, weftUint8, comm, nullptr),
            "weftAllGather", comm);
  std::string out;
  for (int r = 0; r < nranks; ++r) {
    out += all.data() + kLine * static_cast<size_t>(r);
  }
  return out;
}

int benchmark(const weft::perf::Options& o, weftComm_t comm, int rank, int nranks) {
  if (o.root >= nranks) {
    // Every rank says so: weft-run stops the others once the first exits, which may be before
    // rank 0 has written anything.
    std::fprintf(stderr, "weft-perf: root %d is not a rank (0..%d)\n", o.root, nranks - 1);
    return 2;
  }
  std::string ranks = gatherRankLines(comm, rank, nranks);
  if (rank == 0) {
    std::fputs(weft::perf::headerLines(o).c_str(), stdout);
    std::fputs(ranks.c_str(), stdout);
    std::fputs(weft::perf::tableHeader().c_str(), stdout);
  }
  weftStream_t stream = nullptr;
  if (!o.blocking) checkWeft(weftStreamCreate(&stream), "weftStreamCreate", comm);
  weft::perf::Summary summary;
  {
    weft::perf::Bench bench(o, comm, stream, rank, nranks);
    summary = bench.run();
  }
  if (stream != nullptr) checkWeft(weftStreamDestroy(stream), "weftStreamDestroy", comm);
  if (rank == 0) {
    std::fputs(weft::perf::footer(summary.failedMeasurements, summary.avgBusBw).c_str(), stdout);
  }
  return summary.failedMeasurements ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  weft::perf::ParseResult parsed = weft::perf::parseOptions(argc, argv);
  if (!parsed.options) {
    std::fputs(parsed.message.c_str(), parsed.exitCode == 0 ? stdout : stderr);
    return parsed.exitCode;
  }
  // Rows appear as they are measured, also through weft-run's pipes.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);

  weftComm_t comm = nullptr;
  if (weftResult_t r = weftCommInitFromEnv(&comm); r != weftSuccess) {
    std::fprintf(stderr, "weft-perf: weftCommInitFromEnv failed: %s: %s\n", weftGetErrorString(r),
                 weftGetLastError(nullptr));
    return 1;
  }
  int rank = 0, nranks = 1;
  weftCommUserRank(comm, &rank);
  weftCommCount(comm, &nranks);
  try {
    int code = benchmark(*parsed.options, comm, rank, nranks);
    weftCommDestroy(comm);
    return code;
  } catch (const std::exception& e) {
    // Abort so that the other ranks fail fast instead of waiting for this one.
    std::fprintf(stderr, "weft-perf: rank %d: %s\n", rank, e.what());
    weftCommAbort(comm);
    return 1;
  }
}
