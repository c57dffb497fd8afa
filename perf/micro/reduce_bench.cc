// weft-micro-reduce: the reduction loops of collectives/reduce.h (dst = a op b) for every type
// and operator, against memcpy, at an L1-, an L2- and a memory-sized buffer. GB/s counts bytes
// read plus written: 3 per byte of buffer for a reduction, 2 for memcpy.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "collectives/reduce.h"

namespace {

constexpr size_t kSizes[] = {16u << 10, 512u << 10, 64u << 20};

struct Type {
  weftDataType_t type;
  const char* name;
  size_t size;
};
constexpr Type kTypes[] = {
    {weftInt8, "int8", 1},       {weftUint8, "uint8", 1},       {weftInt32, "int32", 4},
    {weftUint32, "uint32", 4},   {weftInt64, "int64", 8},       {weftUint64, "uint64", 8},
    {weftFloat16, "float16", 2}, {weftBfloat16, "bfloat16", 2}, {weftFloat32, "float32", 4},
    {weftFloat64, "float64", 8},
};
struct Op {
  weftRedOp_t op;
  const char* name;
};
constexpr Op kOps[] = {
    {weftSum, "sum"}, {weftProd, "prod"}, {weftMin, "min"}, {weftMax, "max"}, {weftAvg, "avg"}};

// Page-aligned and zeroed: zero is zero in every type, so no loop meets NaNs or denormals.
struct Buffer {
  explicit Buffer(size_t bytes) : p(static_cast<char*>(std::aligned_alloc(4096, bytes))) {
    std::memset(p, 0, bytes);
  }
  ~Buffer() { std::free(p); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  char* p;
};

void setRate(benchmark::State& state, double bytesPerIteration) {
  state.counters["bytes"] = benchmark::Counter(
      bytesPerIteration, benchmark::Counter::kIsRate | benchmark::Counter::kIsIterationInvariant);
}

void reduceLoop(benchmark::State& state, weft::ReduceFn fn, size_t typeSize, size_t bytes) {
  Buffer a(bytes), b(bytes), dst(bytes);
  size_t count = bytes / typeSize;
  for (auto _ : state) {
    fn(dst.p, a.p, b.p, count);
    benchmark::ClobberMemory();
  }
  setRate(state, 3.0 * static_cast<double>(count * typeSize));
}

void memcpyLoop(benchmark::State& state, size_t bytes) {
  Buffer src(bytes), dst(bytes);
  for (auto _ : state) {
    std::memcpy(dst.p, src.p, bytes);
    benchmark::ClobberMemory();
  }
  setRate(state, 2.0 * static_cast<double>(bytes));
}

}  // namespace

int main(int argc, char** argv) {
  for (size_t bytes : kSizes) {
    std::string size = std::to_string(bytes);
    benchmark::RegisterBenchmark(("memcpy/" + size).c_str(), memcpyLoop, bytes);
    for (const Type& t : kTypes) {
      for (const Op& o : kOps) {
        weft::ReduceFn fn = weft::reduceFunction(t.type, o.op);
        if (fn == nullptr) continue;
        std::string name = std::string("reduce/") + t.name + "/" + o.name + "/" + size;
        benchmark::RegisterBenchmark(name.c_str(), reduceLoop, fn, t.size, bytes);
      }
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
