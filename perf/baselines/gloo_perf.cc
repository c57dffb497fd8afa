// gloo-perf: weft-perf's sweep over Gloo's collectives on its tcp transport over loopback, for
// comparison (see sweep.h). It starts its own ranks as forked processes, which meet through a
// Gloo FileStore in a fresh temporary directory:
//   gloo-perf --np 2 all_reduce -b 8 -e 128M -f 2 -n 20 -w 5 -c 1
// all_reduce is Gloo's ring. reduce_scatter is that all-reduce into a scratch buffer and a copy
// of this rank's block: Gloo's own ReduceScatterHalvingDoubling is in place only and races (its
// last step overwrites a block its tcp send may still be reading: wrong results from 64 MiB up
// here), so a Gloo user gets reduce-scatter through all-reduce.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/math.h>
#include <gloo/reduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "perf/baselines/sweep.h"

namespace weft::perf {
namespace {

constexpr std::chrono::seconds kTimeout(600);

// Gloo's element-wise functions, picked out of their overloads.
using ReduceFn = void (*)(void*, const void*, const void*, size_t);
constexpr ReduceFn kSumFloat = &gloo::sum<float>;
constexpr ReduceFn kSumDouble = &gloo::sum<double>;
constexpr ReduceFn kMaxDouble = &gloo::max<double>;

class GlooBackend : public Backend {
 public:
  GlooBackend(int rank, int nranks, const std::string& storeDir) {
    gloo::rendezvous::FileStore store(storeDir);
    gloo::transport::tcp::attr attr;
    attr.iface = "lo";
    auto device = gloo::transport::tcp::CreateDevice(attr);
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, nranks);
    context->setTimeout(kTimeout);
    context->connectFullMesh(store, device);
    context_ = context;
  }
  int rank() const override { return context_->rank; }
  int nranks() const override { return context_->size; }

  void run(Coll coll, const float* send, float* recv, size_t count, int root) override {
    if (count == 0) return;  // Gloo rejects empty buffers; there is nothing to move
    float* in = const_cast<float*>(send);
    size_t n = static_cast<size_t>(context_->size);
    switch (coll) {
      case Coll::kAllReduce:
        allReduce(in, recv, count);
        break;
      case Coll::kAllGather: {
        gloo::AllgatherOptions o(context_);
        o.setInput(in, count);
        o.setOutput(recv, count * n);
        o.setTag(nextTag());
        gloo::allgather(o);
        break;
      }
      case Coll::kReduceScatter:
        scratch_.resize(count * n);
        allReduce(in, scratch_.data(), count * n);
        std::memcpy(recv, scratch_.data() + count * static_cast<size_t>(rank()),
                    count * sizeof(float));
        break;
      case Coll::kBroadcast: {
        gloo::BroadcastOptions o(context_);
        if (rank() == root) o.setInput(in, count);
        o.setOutput(recv, count);
        o.setRoot(root);
        o.setTag(nextTag());
        gloo::broadcast(o);
        break;
      }
      case Coll::kReduce: {
        gloo::ReduceOptions o(context_);
        o.setInput(in, count);
        o.setOutput(recv, count);
        o.setRoot(root);
        o.setReduceFunction(kSumFloat);
        o.setTag(nextTag());
        gloo::reduce(o);
        break;
      }
      case Coll::kAllToAll: {
        gloo::AlltoallOptions o(context_);
        o.setInput(in, count * n);
        o.setOutput(recv, count * n);
        o.setTag(nextTag());
        gloo::alltoall(o);
        break;
      }
      case Coll::kSendRecv:  // refused by unsupportedOption
      case Coll::kSend:
        break;
    }
  }

  void barrier() override {
    gloo::BarrierOptions o(context_);
    o.setTag(nextTag());
    gloo::barrier(o);
  }

  void maxOverRanks(std::vector<double>& values) override {
    if (values.empty()) return;
    gloo::AllreduceOptions o(context_);
    o.setOutput(values.data(), values.size());
    o.setReduceFunction(kMaxDouble);
    o.setTag(nextTag());
    gloo::allreduce(o);
  }

  void sumOverRanks(std::vector<double>& values) override {
    if (values.empty()) return;
    gloo::AllreduceOptions o(context_);
    o.setOutput(values.data(), values.size());
    o.setReduceFunction(kSumDouble);
    o.setTag(nextTag());
    gloo::allreduce(o);
  }

 private:
  uint32_t nextTag() { return tag_++; }

  void allReduce(float* in, float* out, size_t count) {
    gloo::AllreduceOptions o(context_);
    o.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
    o.setInput(in, count);
    o.setOutput(out, count);
    o.setReduceFunction(kSumFloat);
    o.setTag(nextTag());
    gloo::allreduce(o);
  }

  std::shared_ptr<gloo::Context> context_;
  uint32_t tag_ = 1;
  std::vector<float> scratch_;
};

int runRank(int rank, int nranks, const std::string& storeDir, const Options& o) {
  try {
    GlooBackend backend(rank, nranks, storeDir);
    return runSweep(o, backend, "gloo") ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gloo-perf: rank %d: %s\n", rank, e.what());
    return 1;
  }
}

// Forks the ranks and waits for them; when one fails, the others are stopped.
int runRanks(int nranks, const Options& o) {
  char tmpl[] = "/tmp/gloo-perf-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) {
    std::perror("gloo-perf: mkdtemp");
    return 1;
  }
  std::string storeDir = tmpl;
  std::fflush(stdout);
  std::vector<pid_t> pids;
  for (int r = 0; r < nranks; ++r) {
    pid_t pid = ::fork();
    if (pid < 0) {
      std::perror("gloo-perf: fork");
      for (pid_t p : pids)
        ::kill(p, SIGTERM);
      break;
    }
    if (pid == 0) {
      int code = runRank(r, nranks, storeDir, o);
      std::fflush(stdout);
      ::_exit(code);
    }
    pids.push_back(pid);
  }
  int failed = pids.size() == static_cast<size_t>(nranks) ? 0 : 1;
  for (size_t left = pids.size(); left > 0; --left) {
    int status = 0;
    pid_t pid = ::wait(&status);
    if (pid < 0) break;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
    if (!failed) {
      if (WIFSIGNALED(status)) {
        std::fprintf(stderr, "gloo-perf: a rank (pid %d) was killed by signal %d\n", pid,
                     WTERMSIG(status));
      }
      std::fprintf(stderr, "gloo-perf: a rank (pid %d) failed: stopping the others\n", pid);
      for (pid_t p : pids)
        if (p != pid) ::kill(p, SIGTERM);
    }
    failed = 1;
  }
  std::error_code ignored;
  std::filesystem::remove_all(storeDir, ignored);
  return failed;
}

}  // namespace
}  // namespace weft::perf

int main(int argc, char** argv) {
  int nranks = 2;
  std::vector<char*> args(argv, argv + argc);
  if (args.size() >= 3 && std::strcmp(args[1], "--np") == 0) {
    nranks = std::atoi(args[2]);
    args.erase(args.begin() + 1, args.begin() + 3);
  }
  weft::perf::ParseResult parsed =
      weft::perf::parseOptions(static_cast<int>(args.size()), args.data(), nullptr);
  if (!parsed.options) {
    std::fputs(parsed.message.c_str(), parsed.exitCode == 0 ? stdout : stderr);
    if (parsed.exitCode == 0) std::puts("gloo-perf takes --np N (ranks, default 2) first.");
    return parsed.exitCode;
  }
  const weft::perf::Options& o = *parsed.options;
  const char* why = weft::perf::unsupportedOption(o);
  if (*why == '\0' && (nranks < 1 || o.root >= nranks)) why = "--np must be >= 1 and > -r";
  if (*why != '\0') {
    std::fprintf(stderr, "gloo-perf: %s\n", why);
    return 2;
  }
  return weft::perf::runRanks(nranks, o);
}
