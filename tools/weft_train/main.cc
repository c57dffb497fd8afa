// weft-train: trains weft-train's model (model.h) on a text over Weft's training layer and
// reports, per step, the loss, the step's time, the bytes this rank sent and received for it
// (weftCommGetStats) and the memory it holds by kind.
#include <chrono>
#include <cstdio>
#include <exception>
#include <fstream>
#include <string>
#include <vector>

#include "tools/weft_train/model.h"
#include "tools/weft_train/options.h"
#include "tools/weft_train/strategy.h"
#include "tools/weft_train/text_data.h"
#include "weft/weft.hpp"

namespace weft_train {
namespace {

using weft::parallel::MemoryKind;

// "params 1234 grads ..." : what the ledger held at most, by kind.
std::string describeMemory(const MemoryLedger& ledger) {
  static const std::pair<MemoryKind, const char*> kKinds[] = {
      {MemoryKind::kParameters, "params"},    {MemoryKind::kGradients, "grads"},
      {MemoryKind::kOptimizerState, "optim"}, {MemoryKind::kBuckets, "buckets"},
      {MemoryKind::kGathered, "gathered"},
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

int train(const Options& o) {
  weft::Comm comm = weft::Comm::fromEnv();
  const int rank = comm.rank(), nranks = comm.size();
  if (o.batch < nranks) {
    throw std::invalid_argument("--batch " + std::to_string(o.batch) + " is smaller than the " +
                                std::to_string(nranks) + " ranks that split it");
  }
  TextData data(o.text, o.shape.context);
  ModelShape shape = o.shape;
  shape.vocab = data.vocab();
  MemoryLedger ledger;
  AdamConfig adam;
  adam.lr = o.lr;
  auto strategy = Strategy::create(o.zero, comm, parameterCounts(shape), parameterUnits(shape),
                                   o.bucketBytes, adam, ledger);
  strategy->setParameters(initialParameters(shape, o.seed));
  Model<float> model(shape);

  // This rank's share of each global batch; its gradients are weighted so that the ranks'
  // average is the global batch's mean gradient however the batch divides.
  const int first = rank * o.batch / nranks;
  const int count = (rank + 1) * o.batch / nranks - first;
  const float scale =
      static_cast<float>(nranks) * static_cast<float>(count) / static_cast<float>(o.batch);
  if (rank == 0) {
    std::printf(
        "weft-train: %s, %d ranks, zero %d, %zu parameters, batch %d; text %s (%d "
        "symbols, unigram entropy %.4f nats)\n",
        o.zero == 0 ? "data parallel" : "ZeRO", nranks, o.zero,
        [&] {
          size_t n = 0;
          for (size_t c : parameterCounts(shape))
            n += c;
          return n;
        }(),
        o.batch, o.text.c_str(), data.vocab(), data.unigramEntropy());
  }
  std::vector<int> contexts, targets;
  for (int step = 1; step <= o.steps; ++step) {
    const auto start = std::chrono::steady_clock::now();
    const weftCommStats_t before = comm.stats();
    data.batch(o.seed, static_cast<uint64_t>(step), o.batch, first, count, &contexts, &targets);
    model.setBatch(contexts, targets);
    const size_t units = model.units();
    for (size_t u = 0; u < units; ++u) {
      model.forward(u, strategy->forwardParams(u));
      strategy->forwardDone(u);
    }
    const double localLoss = model.loss();
    for (size_t u = units; u-- > 0;) {
      const auto params = strategy->backwardParams(u);
      model.backward(u, params, strategy->grads(u), scale);
      strategy->backwardDone(u);
    }
    strategy->step();
    const weftCommStats_t after = comm.stats();
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    double loss = localLoss * count / o.batch;
    comm.allReduce(std::span(&loss, 1));
    if (rank == 0 && (!o.quiet || step == o.steps)) {
      std::printf(
          "step %d loss %.4f ms %.1f sent %llu received %llu mem %s\n", step, loss, ms,
          static_cast<unsigned long long>(after.total.bytesSent - before.total.bytesSent),
          static_cast<unsigned long long>(after.total.bytesReceived - before.total.bytesReceived),
          describeMemory(ledger).c_str());
      std::fflush(stdout);
    }
  }
  if (!o.dump.empty()) {
    const std::vector<float> all = strategy->allParameters();
    if (rank == 0) writeParameters(o.dump, all);
  }
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
