// mpi-perf: weft-perf's sweep over Open MPI's collectives, for comparison (see sweep.h).
//   mpirun -np 2 mpi-perf all_reduce -b 8 -e 128M -f 2 -n 20 -w 5 -c 1
#include <mpi.h>

#include <cstdio>
#include <cstring>

#include "perf/baselines/sweep.h"

namespace weft::perf {
namespace {

class MpiBackend : public Backend {
 public:
  MpiBackend() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks_);
  }
  int rank() const override { return rank_; }
  int nranks() const override { return nranks_; }

  void run(Coll coll, const float* send, float* recv, size_t count, int root) override {
    int n = static_cast<int>(count);
    MPI_Comm w = MPI_COMM_WORLD;
    switch (coll) {
      case Coll::kAllReduce:
        MPI_Allreduce(send, recv, n, MPI_FLOAT, MPI_SUM, w);
        break;
      case Coll::kAllGather:
        MPI_Allgather(send, n, MPI_FLOAT, recv, n, MPI_FLOAT, w);
        break;
      case Coll::kReduceScatter:
        MPI_Reduce_scatter_block(send, recv, n, MPI_FLOAT, MPI_SUM, w);
        break;
      case Coll::kBroadcast:
        // Out of place, as weftBroadcast: the root's output buffer gets the data too.
        if (rank_ == root) std::memcpy(recv, send, count * sizeof(float));
        MPI_Bcast(recv, n, MPI_FLOAT, root, w);
        break;
      case Coll::kReduce:
        MPI_Reduce(send, recv, n, MPI_FLOAT, MPI_SUM, root, w);
        break;
      case Coll::kAllToAll:
        MPI_Alltoall(send, n, MPI_FLOAT, recv, n, MPI_FLOAT, w);
        break;
      case Coll::kSendRecv:  // refused by unsupportedOption
      case Coll::kSend:
        break;
    }
  }

  void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }

  void maxOverRanks(std::vector<double>& values) override {
    MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_MAX,
                  MPI_COMM_WORLD);
  }

  void sumOverRanks(std::vector<double>& values) override {
    MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_SUM,
                  MPI_COMM_WORLD);
  }

 private:
  int rank_ = 0;
  int nranks_ = 1;
};

}  // namespace
}  // namespace weft::perf

int main(int argc, char** argv) {
  weft::perf::ParseResult parsed = weft::perf::parseOptions(argc, argv, nullptr);
  if (!parsed.options) {
    std::fputs(parsed.message.c_str(), parsed.exitCode == 0 ? stdout : stderr);
    return parsed.exitCode;
  }
  const weft::perf::Options& o = *parsed.options;
  if (const char* why = weft::perf::unsupportedOption(o); *why != '\0') {
    std::fprintf(stderr, "mpi-perf: %s\n", why);
    return 2;
  }
  if (o.maxBytes / sizeof(float) > static_cast<size_t>(INT32_MAX)) {
    std::fprintf(stderr, "mpi-perf: -e is too large for MPI's int counts\n");
    return 2;
  }
  MPI_Init(&argc, &argv);
  weft::perf::MpiBackend backend;
  int failed = 0;
  if (o.root >= backend.nranks()) {
    if (backend.rank() == 0) std::fprintf(stderr, "mpi-perf: root %d is not a rank\n", o.root);
    failed = 1;
  } else {
    failed = weft::perf::runSweep(o, backend, "mpi");
  }
  MPI_Finalize();
  return failed ? 1 : 0;
}
