// weft-train: trains weft-train's model (model.h) on a text over Weft's training layer and
// reports, per step, the loss, the step's time, the bytes this rank sent and received for it
// (weftCommGetStats) and the memory it holds by kind; with --overlap, how a step's time compares
// with its compute and its communication measured apart.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "tools/weft_train/options.h"
#include "tools/weft_train/plot.h"
#include "tools/weft_train/trainer.h"
#include "weft/weft.hpp"

namespace weft_train {
namespace {

using weft::parallel::MemoryKind;

// "params 1234 grads ..." : what the ledger held at most, by kind.
std::string describeMemory(const MemoryLedger& ledger) {
  static const std::pair<MemoryKind, const char*> kKinds[] = {
      {MemoryKind::kParameters, "params"},    {MemoryKind::kGradients, "grads"},
      {MemoryKind::kOptimizerState, "optim"}, {MemoryKind::kBuckets, "buckets"},
      {MemoryKind::kGathered, "gathered"},    {MemoryKind::kHostPool, "offloaded"},
  };
  std::string out;
  for (const auto& [kind, name] : kKinds)
    out += std::string(out.empty() ? "" : " ") + name + " " + std::to_string(ledger.peak(kind));
  return out;
}

void writeParameters(const std::string& path, const std::vector<float>& values) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(values.data()),
          static_cast<std::streamsize>(values.size() * sizeof(float)));
  if (!f) throw std::runtime_error("cannot write " + path);
}

double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Times `rounds` more training steps, and as many of their compute (the model's forward and
// backward) alone and of their communication alone (with the optimizer's update, which needs
// the reduced gradients), interleaved, every rank starting each together; rank 0 prints medians.
// With buckets, a step should take less than its compute and communication one after the other.
// Where the model computes on the cores the collectives need too (here, not on an
// accelerator), it also times steps whose compute only waits as long, unit by unit.
void reportOverlap(Trainer& trainer, weft::Comm& comm, const Options& o) {
  const std::vector<std::vector<float>> params = trainer.parameters();
  std::vector<double> step, compute, communication, idleStep;
  for (int r = 0; r < o.overlap; ++r) {
    const int s = o.steps + 1 + r;
    bool taken = false;
    comm.barrier();
    auto start = std::chrono::steady_clock::now();
    trainer.step(s, &taken);
    step.push_back(msSince(start));
    comm.barrier();
    start = std::chrono::steady_clock::now();
    trainer.computeOnly(s, params);
    compute.push_back(msSince(start));
    comm.barrier();
    start = std::chrono::steady_clock::now();
    trainer.communicationOnly();
    communication.push_back(msSince(start));
    comm.barrier();
    start = std::chrono::steady_clock::now();
    trainer.communicationOnly(compute.back() / (2.0 * static_cast<double>(trainer.units())));
    idleStep.push_back(msSince(start));
  }
  if (comm.rank() != 0) return;
  const double a = median(compute), c = median(communication), t = median(step);
  const double idle = median(idleStep);
  std::printf(
      "overlap: step %.2f ms; compute alone %.2f ms, communication and update alone %.2f ms, "
      "one after the other %.2f ms; step / (compute + communication) %.2f; with compute "
      "that leaves the cores free, step %.2f ms, %.2f\n",
      t, a, c, a + c, t / (a + c), idle, idle / (a + c));
}

// Trains one mode (o.zero, o.precision) and returns its loss curve (rank 0's; empty elsewhere).
LossCurve runMode(const Options& o, weft::Comm& comm, double* unigramEntropy) {
  Trainer trainer(o, comm);
  const int rank = comm.rank();
  const std::string mode =
      o.paramServers > 0 ? std::to_string(o.paramServers) + " parameter servers"
      : o.zero == 0      ? "data parallel"
                         : "ZeRO-" + std::to_string(o.zero) + (o.offload ? " offloaded" : "");
  *unigramEntropy = trainer.data().unigramEntropy();
  if (rank == 0) {
    const std::vector<size_t> counts = parameterCounts(trainer.shape());
    std::printf(
        "weft-train: %s, %d ranks, %s, %zu parameters, batch %d; text %s (%d "
        "symbols, unigram entropy %.4f nats)\n",
        mode.c_str(), comm.size(), o.precision.c_str(),
        std::accumulate(counts.begin(), counts.end(), size_t{0}), o.batch, o.text.c_str(),
        trainer.data().vocab(), *unigramEntropy);
  }
  LossCurve curve{mode + ", " + o.precision, {}};
  for (int step = 1; step <= o.steps; ++step) {
    const auto start = std::chrono::steady_clock::now();
    const weftCommStats_t before = comm.stats();
    bool taken = false;
    const double localLoss = trainer.step(step, &taken);
    const weftCommStats_t after = comm.stats();
    const double ms = msSince(start);
    double loss = localLoss * trainer.localExamples() / o.batch;
    comm.allReduce(std::span(&loss, 1));
    if (rank != 0) continue;
    curve.loss.emplace_back(step, loss);
    if (!o.quiet || step == o.steps) {
      const std::string skipped =
          taken ? "" : " skipped: loss scale now " + std::to_string(trainer.lossScale());
      std::printf(
          "step %d loss %.4f ms %.1f sent %llu received %llu mem %s%s\n", step, loss, ms,
          static_cast<unsigned long long>(after.total.bytesSent - before.total.bytesSent),
          static_cast<unsigned long long>(after.total.bytesReceived - before.total.bytesReceived),
          describeMemory(trainer.ledger()).c_str(), skipped.c_str());
      std::fflush(stdout);
    }
  }
  if (!o.dump.empty()) {
    std::vector<float> all;
    for (const std::vector<float>& p : trainer.parameters())
      all.insert(all.end(), p.begin(), p.end());
    if (rank == 0) writeParameters(o.dump, all);
  }
  if (o.overlap > 0) reportOverlap(trainer, comm, o);
  return curve;
}

int train(const Options& o) {
  weft::Comm comm = weft::Comm::fromEnv();
  std::vector<LossCurve> curves;
  double entropy = 0;
  for (int zero : o.zeros) {
    for (const std::string& precision : o.precisions) {
      Options run = o;
      run.zero = zero;
      run.precision = precision;
      curves.push_back(runMode(run, comm, &entropy));
    }
  }
  if (!o.plot.empty() && comm.rank() == 0) plotLossCurves(curves, entropy, o.plot);
  return 0;
}

}  // namespace
}  // namespace weft_train

int main(int argc, char** argv) {
  weft_train::Options options;
  int code = 0;
  if (!weft_train::parseOptions(argc, argv, &options, &code)) return code;
  try {
    return weft_train::train(options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weft-train: %s\n", e.what());
    return 1;
  }
}
