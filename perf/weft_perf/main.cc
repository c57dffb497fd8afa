// weft-perf: nccl-tests compatible benchmark over the public API. See options.cc.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "perf/weft_perf/agreement.h"
#include "perf/weft_perf/bench.h"
#include "perf/weft_perf/compute_load.h"
#include "perf/weft_perf/json_report.h"
#include "perf/weft_perf/options.h"
#include "perf/weft_perf/report.h"
#include "perf/weft_perf/weft_error.h"
#include "perf/weft_perf/world.h"
#include "weft/weft.h"

namespace {

using weft::perf::Agreement;
using weft::perf::checkWeft;
using weft::perf::ComputeLoad;
using weft::perf::JsonReport;
using weft::perf::Options;
using weft::perf::Summary;
using weft::perf::World;

std::string hostName() {
  char host[128] = {};
  ::gethostname(host, sizeof host - 1);
  return host;
}

// Rank 0 prints the header, every rank's line, the table and the footer; json is rank 0's.
Summary runRank(const Options& o, World& world, Agreement& agreement, int thread,
                JsonReport* json) {
  const int rank = world.rank(thread);
  try {
    std::string ranks = agreement.gather(
        thread, weft::perf::rankLine(rank, static_cast<int>(::getpid()), hostName()));
    if (rank == 0) {
      std::fputs((weft::perf::headerLines(o) + ranks).c_str(), stdout);
      std::fputs(weft::perf::tableHeader(o.reportCpuTime, o.percentiles).c_str(), stdout);
      if (json != nullptr) json->begin(o, world.nranks());
    }
    weftStream_t stream = nullptr;
    if (!o.blocking) checkWeft(weftStreamCreate(&stream), "weftStreamCreate", nullptr);
    Summary summary;
    {
      weft::perf::Bench bench(o, {world.comm(thread), stream, thread, rank, world.nranks()},
                              agreement, rank == 0 ? json : nullptr);
      summary = bench.run();
    }
    if (stream != nullptr) checkWeft(weftStreamDestroy(stream), "weftStreamDestroy", nullptr);
    return summary;
  } catch (const std::exception& e) {
    // Its sibling threads may wait for it forever: end the process, after aborting its
    // communicator so that the other processes fail fast instead of waiting for this one.
    std::fprintf(stderr, "weft-perf: rank %d: %s\n", rank, e.what());
    world.abort(thread);
    std::fflush(nullptr);
    std::_Exit(1);
  }
}

int run(const Options& o, World& world) {
  if (o.root >= world.nranks()) {
    // Every process says so: weft-run stops the others once the first exits, which may be
    // before process 0 has written anything.
    std::fprintf(stderr, "weft-perf: root %d is not a rank (0..%d)\n", o.root, world.nranks() - 1);
    return 2;
  }
  JsonReport json;
  std::string error;
  const bool writesJson = world.process() == 0 && !o.outputFile.empty();
  const bool opened = !writesJson || json.open(o.outputFile, &error);
  if (!opened) std::fprintf(stderr, "weft-perf: %s\n", error.c_str());
  if (!world.allOk(opened)) return 2;

  Agreement agreement(world);
  std::optional<ComputeLoad> load;
  if (o.busy > 0) load.emplace(o.busy * world.threads());
  std::vector<Summary> summaries(static_cast<size_t>(world.threads()));
  JsonReport* rank0Json = writesJson ? &json : nullptr;
  std::vector<std::thread> threads;
  for (int t = 1; t < world.threads(); ++t) {
    threads.emplace_back([&, t] { summaries[t] = runRank(o, world, agreement, t, rank0Json); });
  }
  summaries[0] = runRank(o, world, agreement, 0, rank0Json);
  for (std::thread& t : threads) {
    t.join();
  }
  const double computeRate = load ? load->roundsPerSecond() : 0;
  load.reset();
  // The ranks agreed on every time and wrong count, so their summaries are the same.
  const Summary& s = summaries[0];
  const bool fastEnough = weft::perf::meetsMinimum(s.avgBusBw, o.minBusBw);
  if (world.process() == 0) {
    std::fputs(weft::perf::footer(s.failedMeasurements, s.avgBusBw, o.minBusBw).c_str(), stdout);
    if (o.busy > 0) {
      std::printf("# Compute left to the busy threads: %.4g G rounds/s in process 0\n#\n",
                  computeRate / 1e9);
    }
    if (writesJson) json.end(s.failedMeasurements, s.avgBusBw, o.minBusBw);
    if (!fastEnough) {
      std::fprintf(stderr, "weft-perf: average bus bandwidth %g GB/s is below the minimum %g\n",
                   s.avgBusBw, *o.minBusBw);
    }
    std::fflush(nullptr);
  }
  // A failing run fails in every process, and weft-run stops the others once the first exits
  // non-zero: they wait until process 0 has written its report.
  const bool passed = s.failedMeasurements == 0 && fastEnough;
  (void)world.allOk(passed);
  return passed ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  weft::perf::ParseResult parsed =
      weft::perf::parseOptions(argc, argv, std::getenv(weft::perf::kMinBusBwVariable));
  if (!parsed.options) {
    std::fputs(parsed.message.c_str(), parsed.exitCode == 0 ? stdout : stderr);
    return parsed.exitCode;
  }
  const Options& o = *parsed.options;
  // Rows appear as they are measured, also through weft-run's pipes.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  // -T is Weft's own deadline on every wait; Weft reads its environment at its first call.
  if (o.timeoutSeconds > 0) setenv("WEFT_TIMEOUT", std::to_string(o.timeoutSeconds).c_str(), 1);

  std::unique_ptr<World> world;
  try {
    world = std::make_unique<World>(o.threads);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weft-perf: %s\n", e.what());
    return 1;
  }
  try {
    return run(o, *world);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weft-perf: %s\n", e.what());
    return 1;
  }
}
