// weft-perf's logic without a communicator: options, sizes, bandwidth formulas, the 16-bit
// float formats, the data generator and reference check, and the report format.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "perf/weft_perf/call_times.h"
#include "perf/weft_perf/check.h"
#include "perf/weft_perf/coll.h"
#include "perf/weft_perf/compute_load.h"
#include "perf/weft_perf/json_report.h"
#include "perf/weft_perf/options.h"
#include "perf/weft_perf/report.h"
#include "perf/weft_perf/types.h"

namespace weft::perf {
namespace {

ParseResult parse(std::vector<const char*> args, const char* program = "weft-perf",
                  const char* minBusBwFromEnv = nullptr) {
  args.insert(args.begin(), program);
  return parseOptions(static_cast<int>(args.size()), args.data(), minBusBwFromEnv);
}

Options options(std::vector<const char*> args) {
  ParseResult r = parse(std::move(args));
  EXPECT_TRUE(r.options) << r.message;
  return r.options.value_or(Options{});
}

// ---- options ----

TEST(WeftPerfOptions, ParseSize) {
  EXPECT_EQ(parseSize("8"), 8u);
  EXPECT_EQ(parseSize("0"), 0u);
  EXPECT_EQ(parseSize("1K"), 1024u);
  EXPECT_EQ(parseSize("1k"), 1024u);
  EXPECT_EQ(parseSize("1.5K"), 1536u);
  EXPECT_EQ(parseSize("32M"), 32u << 20);
  EXPECT_EQ(parseSize("2G"), size_t{2} << 30);
  EXPECT_FALSE(parseSize(""));
  EXPECT_FALSE(parseSize("M"));
  EXPECT_FALSE(parseSize("1T"));
  EXPECT_FALSE(parseSize("1KB"));
  EXPECT_FALSE(parseSize("-1"));
}

// Every field that parsing sets.
void expectSameOptions(const Options& got, const Options& want) {
  EXPECT_EQ(got.coll, want.coll);
  EXPECT_EQ(got.minBytes, want.minBytes);
  EXPECT_EQ(got.maxBytes, want.maxBytes);
  EXPECT_EQ(got.stepBytes, want.stepBytes);
  EXPECT_EQ(got.stepFactor, want.stepFactor);
  EXPECT_EQ(got.iters, want.iters);
  EXPECT_EQ(got.warmupIters, want.warmupIters);
  EXPECT_EQ(got.aggIters, want.aggIters);
  EXPECT_EQ(got.check, want.check);
  ASSERT_EQ(got.types.size(), want.types.size());
  for (size_t i = 0; i < got.types.size(); ++i)
    EXPECT_EQ(got.types[i].type, want.types[i].type);
  ASSERT_EQ(got.ops.size(), want.ops.size());
  for (size_t i = 0; i < got.ops.size(); ++i)
    EXPECT_EQ(got.ops[i].op, want.ops[i].op);
  EXPECT_EQ(got.root, want.root);
  EXPECT_EQ(got.blocking, want.blocking);
  EXPECT_EQ(got.sharedBuffers, want.sharedBuffers);
  EXPECT_EQ(got.timeAcrossRanks, want.timeAcrossRanks);
  EXPECT_EQ(got.threads, want.threads);
  EXPECT_EQ(got.runCycles, want.runCycles);
  EXPECT_EQ(got.timeoutSeconds, want.timeoutSeconds);
  EXPECT_EQ(got.reportCpuTime, want.reportCpuTime);
  EXPECT_EQ(got.outputFile, want.outputFile);
  EXPECT_EQ(got.minBusBw, want.minBusBw);
}

// No flag means nccl-tests' default value for it (as its src/common.cu sets them).
TEST(WeftPerfOptions, DefaultsAreNcclTests) {
  expectSameOptions(
      options({"all_reduce"}),
      options({"all_reduce", "-b", "32M", "-e", "32M", "-i", "1M", "-f", "1",     "-n",
               "20",         "-w", "5",   "-m", "1",   "-c", "1",  "-d", "float", "-o",
               "sum",        "-r", "0",   "-z", "0",   "-R", "0",  "-a", "1",     "-t",
               "1",          "-N", "1",   "-T", "0",   "-C", "0"}));
  EXPECT_FALSE(options({"all_reduce"}).minBusBw);
}

// The same settings by short and by long flags.
TEST(WeftPerfOptions, ShortAndLongFlags) {
  Options want;
  want.coll = Coll::kReduce;
  want.minBytes = 8;
  want.maxBytes = 1u << 20;
  want.stepFactor = 4;
  want.stepBytes = 16;
  want.iters = 7;
  want.warmupIters = 2;
  want.aggIters = 3;
  want.check = 0;
  want.types = {typeInfo(weftBfloat16)};
  want.ops = {{weftMax, "max"}};
  want.root = 1;
  want.blocking = true;
  want.sharedBuffers = true;
  want.timeAcrossRanks = TimeAcrossRanks::kMin;
  want.threads = 3;
  want.runCycles = 4;
  want.timeoutSeconds = 9;
  want.reportCpuTime = true;
  want.outputFile = "out.json";
  want.minBusBw = 1.5;
  expectSameOptions(
      options({"reduce", "-b", "8",        "-e", "1M", "-f", "4",  "-i",       "16",
               "-n",     "7",  "-w",       "2",  "-m", "3",  "-c", "0",        "-d",
               "bf16",   "-o", "max",      "-r", "1",  "-z", "1",  "-a",       "2",
               "-t",     "3",  "-g",       "1",  "-N", "4",  "-T", "9",        "-C",
               "1",      "-J", "out.json", "-G", "0",  "-R", "1",  "--min_bw", "1.5"}),
      want);
  expectSameOptions(options({"reduce",
                             "--minbytes=8",
                             "--maxbytes",
                             "1M",
                             "--stepfactor",
                             "4",
                             "--stepbytes",
                             "16",
                             "--iters",
                             "7",
                             "--warmup_iters",
                             "2",
                             "--agg_iters",
                             "3",
                             "--check",
                             "0",
                             "--datatype",
                             "bf16",
                             "--op",
                             "max",
                             "--root",
                             "1",
                             "--blocking",
                             "1",
                             "--average",
                             "2",
                             "--nthreads",
                             "3",
                             "--ngpus",
                             "1",
                             "--run_cycles",
                             "4",
                             "--timeout",
                             "9",
                             "--report_cputime",
                             "1",
                             "--output_file",
                             "out.json",
                             "--cudagraph",
                             "0",
                             "--local_register",
                             "1",
                             "--min_bw",
                             "1.5"}),
                    want);
  // Values that the flags above do not take.
  EXPECT_EQ(options({"broadcast", "--root", "-1"}).root, -1);
  EXPECT_EQ(options({"broadcast", "-a", "0"}).timeAcrossRanks, TimeAcrossRanks::kRank0);
  EXPECT_EQ(options({"broadcast", "-a", "3"}).timeAcrossRanks, TimeAcrossRanks::kMax);
  EXPECT_EQ(options({"broadcast", "-N", "0"}).runCycles, 0);
  EXPECT_EQ(options({"broadcast", "-o", "avg"}).ops[0].op, weftAvg);
}

TEST(WeftPerfOptions, CollectiveNames) {
  const std::pair<const char*, Coll> names[] = {
      {"all_reduce", Coll::kAllReduce},
      {"all_reduce_perf", Coll::kAllReduce},
      {"all_gather", Coll::kAllGather},
      {"all_gather_perf", Coll::kAllGather},
      {"reduce_scatter", Coll::kReduceScatter},
      {"reduce_scatter_perf", Coll::kReduceScatter},
      {"broadcast", Coll::kBroadcast},
      {"broadcast_perf", Coll::kBroadcast},
      {"reduce", Coll::kReduce},
      {"reduce_perf", Coll::kReduce},
      {"all_to_all", Coll::kAllToAll},
      {"alltoall_perf", Coll::kAllToAll},
      {"alltoall", Coll::kAllToAll},
      {"sendrecv", Coll::kSendRecv},
      {"sendrecv_perf", Coll::kSendRecv},
      {"send", Coll::kSend},
      {"send_perf", Coll::kSend},
  };
  for (const auto& [name, coll] : names) {
    EXPECT_EQ(options({name}).coll, coll) << name;
    EXPECT_EQ(collFromName(collName(coll)), coll);
  }
  EXPECT_FALSE(collFromName("allreduce"));
}

TEST(WeftPerfOptions, CollectiveFromProgramName) {
  ParseResult r = parse({"-b", "8"}, "/opt/bin/reduce_scatter_perf");
  ASSERT_TRUE(r.options) << r.message;
  EXPECT_EQ(r.options->coll, Coll::kReduceScatter);
  // An explicit collective still wins.
  r = parse({"broadcast"}, "all_reduce_perf");
  ASSERT_TRUE(r.options) << r.message;
  EXPECT_EQ(r.options->coll, Coll::kBroadcast);
}

TEST(WeftPerfOptions, AllTypesAndOps) {
  Options o = options({"all_reduce", "-d", "all", "-o", "all"});
  ASSERT_EQ(o.types.size(), 10u);
  EXPECT_STREQ(o.types.front().name, "int8");
  EXPECT_STREQ(o.types.back().name, "bfloat16");
  ASSERT_EQ(o.ops.size(), 5u);
  EXPECT_STREQ(o.ops.front().name, "sum");
  EXPECT_STREQ(o.ops.back().name, "avg");
}

TEST(WeftPerfOptions, TypeNames) {
  const std::pair<const char*, weftDataType_t> names[] = {
      {"int8", weftInt8},       {"char", weftInt8},       {"uint8", weftUint8},
      {"int32", weftInt32},     {"int", weftInt32},       {"uint32", weftUint32},
      {"int64", weftInt64},     {"uint64", weftUint64},   {"half", weftFloat16},
      {"float16", weftFloat16}, {"float", weftFloat32},   {"float32", weftFloat32},
      {"double", weftFloat64},  {"float64", weftFloat64}, {"bfloat16", weftBfloat16},
      {"bf16", weftBfloat16},   {"fp16", weftFloat16},    {"fp32", weftFloat32},
      {"fp64", weftFloat64},
  };
  for (const auto& [name, type] : names) {
    auto t = typeFromName(name);
    ASSERT_TRUE(t) << name;
    EXPECT_EQ(t->type, type) << name;
  }
  EXPECT_EQ(typeInfo(weftFloat16).size, 2u);
  EXPECT_EQ(typeInfo(weftUint64).size, 8u);
}

TEST(WeftPerfOptions, Errors) {
  for (std::vector<const char*> args : std::vector<std::vector<const char*>>{
           {},                              // no collective
           {"allreduce"},                   // unknown collective
           {"all_reduce", "-d", "float8"},  // unknown type
           {"all_reduce", "-o", "mulsum"},  // unknown op
           {"all_reduce", "-b", "2M", "-e", "1M"},
           {"all_reduce", "-b", "1x"},
           {"all_reduce", "-i", "0"},  // would never advance
           {"all_reduce", "-n", "0"},
           {"all_reduce", "-m", "0"},
           {"all_reduce", "-w", "-1"},
           {"all_reduce", "-r", "-2"},
           {"all_reduce", "-a", "4"},
           {"all_reduce", "-R", "2"},  // no symmetric registration
           {"all_reduce", "-t", "0"},
           {"all_reduce", "-g", "2"},
           {"all_reduce", "-N", "-1"},
           {"all_reduce", "-T", "-1"},
           {"all_reduce", "-C", "2"},
           {"all_reduce", "-G", "1"},  // no CUDA graphs
           {"all_reduce", "--min_bw", "fast"},
           {"all_reduce", "--min_bw", "-1"},
           {"all_reduce", "--bogus"},
       }) {
    ParseResult r = parse(args);
    EXPECT_FALSE(r.options) << (args.empty() ? "" : args.back());
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.message.find("weft-perf: "), std::string::npos) << r.message;
  }
}

bool contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

// Errors say what would have been valid, and arguments in the order they were typed.
TEST(WeftPerfOptions, ErrorsNameValidValues) {
  ParseResult type = parse({"all_reduce", "-d", "float8"});
  EXPECT_TRUE(contains(type.message, "'float8'")) << type.message;
  for (const char* name : {"int8", "uint64", "half", "float", "double", "bfloat16", "fp32", "bf16"})
    EXPECT_TRUE(contains(type.message, name)) << name << ": " << type.message;
  ParseResult op = parse({"all_reduce", "-o", "mulsum"});
  EXPECT_TRUE(contains(op.message, "sum prod max min avg")) << op.message;
  ParseResult coll = parse({"allreduce"});
  EXPECT_TRUE(contains(coll.message, "all_reduce all_gather reduce_scatter")) << coll.message;
  ParseResult graph = parse({"all_reduce", "-G", "1"});
  EXPECT_TRUE(contains(graph.message, "-G 1: ")) << graph.message;
  EXPECT_TRUE(contains(graph.message, "only -G 0")) << graph.message;
  ParseResult extras = parse({"all_reduce", "-b", "8", "stray", "7"});
  EXPECT_TRUE(contains(extras.message, "unexpected arguments: stray 7\n")) << extras.message;
}

// Every option's line in --help shows its default value.
TEST(WeftPerfOptions, HelpListsEveryOptionWithItsDefault) {
  ParseResult help = parse({"--help"});
  EXPECT_EQ(help.exitCode, 0);
  const std::pair<const char*, const char*> defaults[] = {
      {"--minbytes", "=33554432"},
      {"--maxbytes", "=33554432"},
      {"--stepbytes", "=1048576"},
      {"--stepfactor", "=1"},
      {"--iters", "=20"},
      {"--warmup_iters", "=5"},
      {"--agg_iters", "=1"},
      {"--run_cycles", "=1"},
      {"--check", "=1"},
      {"--datatype", "=float"},
      {"--op", "=sum"},
      {"--root", "=0"},
      {"--blocking", "=0"},
      {"--local_register", "=0"},
      {"--average", "=1"},
      {"--nthreads", "=1"},
      {"--ngpus", "=1"},
      {"--timeout", "=0"},
      {"--report_cputime", "=0"},
      {"--output_file", "(default: none)"},
      {"--cudagraph", "=0"},
      {"--min_bw", "(default: $WEFT_TESTS_MIN_BW, else no check)"},
      {"--busy", "=0"},
      {"--percentiles", "p50, p99 and max"},
  };
  size_t options = 0;
  std::istringstream lines(help.message);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("  -", 0) == 0) ++options;
  }
  EXPECT_EQ(options, std::size(defaults) + 2) << "and --help, --version; " << help.message;
  for (const auto& [flag, value] : defaults) {
    const size_t at = help.message.find(std::string(flag) + " ");
    ASSERT_NE(at, std::string::npos) << flag;
    const std::string line = help.message.substr(at, help.message.find('\n', at) - at);
    EXPECT_TRUE(contains(line, value)) << line;
  }
  EXPECT_TRUE(contains(help.message, "WEFT_TESTS_MIN_BW")) << help.message;
}

// WEFT_TESTS_MIN_BW sets the minimum; --min_bw overrides it.
TEST(WeftPerfOptions, MinimumBusBandwidth) {
  EXPECT_EQ(parse({"all_reduce"}, "weft-perf", "12.5").options->minBusBw, 12.5);
  EXPECT_EQ(parse({"all_reduce", "--min_bw", "3"}, "weft-perf", "12.5").options->minBusBw, 3.0);
  EXPECT_FALSE(parse({"all_reduce"}, "weft-perf", "").options->minBusBw);
  ParseResult bad = parse({"all_reduce"}, "weft-perf", "lots");
  EXPECT_FALSE(bad.options);
  EXPECT_EQ(bad.exitCode, 2);
  EXPECT_TRUE(contains(bad.message, "WEFT_TESTS_MIN_BW='lots'")) << bad.message;
  EXPECT_EQ(parse({"all_reduce", "--min_bw", "2"}, "weft-perf", "lots").options->minBusBw, 2.0);
  EXPECT_EQ(parse({"--help"}, "weft-perf", "lots").exitCode, 0);
}

TEST(WeftPerfOptions, SizeList) {
  EXPECT_EQ(sizeList(options({"all_reduce", "-b", "8", "-e", "1M", "-f", "4"})),
            (std::vector<size_t>{8, 32, 128, 512, 2048, 8192, 32768, 131072, 524288}));
  EXPECT_EQ(sizeList(options({"all_reduce", "-b", "1K", "-e", "4K", "-i", "1K"})),
            (std::vector<size_t>{1024, 2048, 3072, 4096}));
  EXPECT_EQ(sizeList(options({"all_reduce", "-b", "0", "-e", "4", "-f", "2"})),
            (std::vector<size_t>{0, 1, 2, 4}));
  EXPECT_EQ(sizeList(options({"all_reduce"})), std::vector<size_t>{32u << 20});
  Options huge = options({"all_reduce", "-b", "1G", "-e", "1G"});
  huge.maxBytes = std::numeric_limits<size_t>::max();
  huge.stepFactor = 1u << 20;
  EXPECT_EQ(sizeList(huge), (std::vector<size_t>{size_t{1} << 30, size_t{1} << 50}))
      << "stops before overflowing";
}

// ---- collectives: counts and bandwidth ----

TEST(WeftPerfColl, CountsFollowNcclTests) {
  auto expect = [](Coll c, size_t count, int n, CollCounts want) {
    CollCounts got = collCounts(c, count, n);
    EXPECT_EQ(got.sendCount, want.sendCount) << collName(c);
    EXPECT_EQ(got.recvCount, want.recvCount) << collName(c);
    EXPECT_EQ(got.paramCount, want.paramCount) << collName(c);
    EXPECT_EQ(got.sendInplaceOffset, want.sendInplaceOffset) << collName(c);
    EXPECT_EQ(got.recvInplaceOffset, want.recvInplaceOffset) << collName(c);
  };
  expect(Coll::kAllReduce, 10, 4, {10, 10, 10, 0, 0});
  expect(Coll::kBroadcast, 10, 4, {10, 10, 10, 0, 0});
  expect(Coll::kReduce, 10, 4, {10, 10, 10, 0, 0});
  expect(Coll::kSendRecv, 10, 4, {10, 10, 10, 0, 0});
  expect(Coll::kSend, 10, 4, {10, 10, 10, 0, 0});
  expect(Coll::kAllGather, 10, 4, {2, 8, 2, 2, 0});
  expect(Coll::kReduceScatter, 10, 4, {8, 2, 2, 0, 2});
  expect(Coll::kAllToAll, 10, 4, {8, 8, 2, 0, 0});
  expect(Coll::kAllGather, 3, 4, {0, 0, 0, 0, 0});
  // The size column: all_gather reports the whole receive buffer.
  EXPECT_EQ(reportedBytes(collCounts(Coll::kAllGather, 256, 4), 4), 1024u);
  EXPECT_EQ(reportedBytes(collCounts(Coll::kReduceScatter, 10, 4), 4), 32u);
}

TEST(WeftPerfColl, BusBandwidthFactors) {
  EXPECT_DOUBLE_EQ(busBwFactor(Coll::kAllReduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(busBwFactor(Coll::kAllReduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(busBwFactor(Coll::kAllReduce, 1), 0.0);
  EXPECT_DOUBLE_EQ(busBwFactor(Coll::kAllGather, 4), 0.75);
  EXPECT_DOUBLE_EQ(busBwFactor(Coll::kReduceScatter, 8), 0.875);
  EXPECT_DOUBLE_EQ(busBwFactor(Coll::kAllToAll, 2), 0.5);
  EXPECT_DOUBLE_EQ(busBwFactor(Coll::kBroadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(busBwFactor(Coll::kReduce, 8), 1.0);
  EXPECT_DOUBLE_EQ(busBwFactor(Coll::kSendRecv, 8), 1.0);
  EXPECT_DOUBLE_EQ(busBwFactor(Coll::kSend, 2), 1.0);
}

TEST(WeftPerfColl, Bandwidth) {
  // 1e9 bytes of float in one second on 4 ranks.
  Bandwidth ar = bandwidth(Coll::kAllReduce, 250'000'000, 4, 1.0, 4);
  EXPECT_DOUBLE_EQ(ar.algBw, 1.0);
  EXPECT_DOUBLE_EQ(ar.busBw, 1.5);
  // all_gather's count is per rank: algbw counts the whole gathered buffer.
  Bandwidth ag = bandwidth(Coll::kAllGather, 62'500'000, 4, 0.5, 4);
  EXPECT_DOUBLE_EQ(ag.algBw, 2.0);
  EXPECT_DOUBLE_EQ(ag.busBw, 1.5);
  Bandwidth a2a = bandwidth(Coll::kAllToAll, 62'500'000, 4, 1.0, 4);
  EXPECT_DOUBLE_EQ(a2a.algBw, 1.0);
  EXPECT_DOUBLE_EQ(a2a.busBw, 0.75);
  Bandwidth b = bandwidth(Coll::kBroadcast, 1000, 8, 1e-6, 4);
  EXPECT_DOUBLE_EQ(b.algBw, 8.0);
  EXPECT_DOUBLE_EQ(b.busBw, 8.0);
  EXPECT_EQ(bandwidth(Coll::kAllReduce, 0, 4, 1e-6, 2).algBw, 0.0);
}

TEST(WeftPerfColl, SendPairsRanksAndLeavesTheLastOfAnOddCountIdle) {
  EXPECT_EQ(sendRole(0, 1), SendRole::kIdle);
  EXPECT_EQ(sendRole(0, 2), SendRole::kSender);
  EXPECT_EQ(sendRole(1, 2), SendRole::kReceiver);
  EXPECT_EQ(sendRole(2, 3), SendRole::kIdle);
  EXPECT_EQ(sendRole(2, 4), SendRole::kSender);
  EXPECT_EQ(sendRole(3, 4), SendRole::kReceiver);
}

TEST(WeftPerfColl, InPlaceRules) {
  EXPECT_TRUE(collChecksInPlace(Coll::kAllReduce));
  EXPECT_TRUE(collChecksInPlace(Coll::kAllToAll));
  EXPECT_FALSE(collChecksInPlace(Coll::kSendRecv));
  EXPECT_FALSE(collChecksInPlace(Coll::kSend));
  EXPECT_TRUE(collHasOp(Coll::kReduceScatter));
  EXPECT_FALSE(collHasOp(Coll::kAllGather));
  EXPECT_TRUE(collHasRoot(Coll::kReduce));
  EXPECT_FALSE(collHasRoot(Coll::kAllReduce));
}

// ---- 16-bit floats ----

TEST(WeftPerfTypes, Half) {
  for (int i = -2048; i <= 2048; ++i) {
    EXPECT_EQ(halfToFloat(floatToHalf(static_cast<float>(i))), static_cast<float>(i));
  }
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65519.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);                      // rounds to infinity
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001);         // smallest subnormal
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000);         // halfway: to even (zero)
  EXPECT_EQ(floatToHalf(std::ldexp(3.0f, -26)), 0x0001);         // above halfway
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // tie to even
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(3.0f, -11)), 0x3c02);  // tie to even, upwards
  EXPECT_EQ(floatToHalf(2047.5f), floatToHalf(2048.0f));
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(std::nanf("")))));
  EXPECT_EQ(halfToFloat(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(halfToFloat(0x8000), 0.0f);
  EXPECT_TRUE(std::signbit(halfToFloat(0x8000)));
}

TEST(WeftPerfTypes, Bfloat16) {
  for (int i = -256; i <= 256; ++i) {
    EXPECT_EQ(bf16ToFloat(floatToBf16(static_cast<float>(i))), static_cast<float>(i));
  }
  EXPECT_EQ(floatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);  // tie to even
  EXPECT_EQ(floatToBf16(1.0f + std::ldexp(3.0f, -8)), 0x3f82);
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(std::nanf("")))));
  EXPECT_EQ(bf16ToFloat(floatToBf16(std::numeric_limits<float>::infinity())),
            std::numeric_limits<float>::infinity());
}

// ---- generator and reference ----

// Element access for tests, by type, through double (exact for the generator's values).
double loadAsDouble(weftDataType_t type, const void* buf, size_t i) {
  const char* p = static_cast<const char*>(buf) + i * typeInfo(type).size;
  switch (type) {
    case weftInt8:
      return *reinterpret_cast<const int8_t*>(p);
    case weftUint8:
      return *reinterpret_cast<const uint8_t*>(p);
    case weftInt32:
      return *reinterpret_cast<const int32_t*>(p);
    case weftUint32:
      return *reinterpret_cast<const uint32_t*>(p);
    case weftInt64:
      return static_cast<double>(*reinterpret_cast<const int64_t*>(p));
    case weftUint64:
      return static_cast<double>(*reinterpret_cast<const uint64_t*>(p));
    case weftFloat16:
      return halfToFloat(*reinterpret_cast<const uint16_t*>(p));
    case weftFloat32:
      return *reinterpret_cast<const float*>(p);
    case weftFloat64:
      return *reinterpret_cast<const double*>(p);
    case weftBfloat16:
      return bf16ToFloat(*reinterpret_cast<const uint16_t*>(p));
    default:
      return 0;
  }
}

void storeFromDouble(weftDataType_t type, void* buf, size_t i, double v) {
  char* p = static_cast<char*>(buf) + i * typeInfo(type).size;
  switch (type) {
    case weftInt8:
      *reinterpret_cast<int8_t*>(p) = static_cast<int8_t>(v);
      break;
    case weftUint8:
      *reinterpret_cast<uint8_t*>(p) = static_cast<uint8_t>(v);
      break;
    case weftInt32:
      *reinterpret_cast<int32_t*>(p) = static_cast<int32_t>(v);
      break;
    case weftUint32:
      *reinterpret_cast<uint32_t*>(p) = static_cast<uint32_t>(v);
      break;
    case weftInt64:
      *reinterpret_cast<int64_t*>(p) = static_cast<int64_t>(v);
      break;
    case weftUint64:
      *reinterpret_cast<uint64_t*>(p) = static_cast<uint64_t>(v);
      break;
    case weftFloat16:
      *reinterpret_cast<uint16_t*>(p) = floatToHalf(static_cast<float>(v));
      break;
    case weftFloat32:
      *reinterpret_cast<float*>(p) = static_cast<float>(v);
      break;
    case weftFloat64:
      *reinterpret_cast<double*>(p) = v;
      break;
    case weftBfloat16:
      *reinterpret_cast<uint16_t*>(p) = floatToBf16(static_cast<float>(v));
      break;
    default:
      break;
  }
}

using Bytes = std::vector<char>;

bool isSigned(weftDataType_t type) {
  return type == weftInt8 || type == weftInt32 || type == weftInt64;
}

// Integers widened to 64 bits (sign- or zero-extended); stored back by truncation, so
// arithmetic on the wide value wraps like the element type's (little-endian host).
int64_t loadInt(weftDataType_t type, const void* buf, size_t i) {
  size_t ts = typeInfo(type).size;
  uint64_t bits = 0;
  std::memcpy(&bits, static_cast<const char*>(buf) + i * ts, ts);
  if (isSigned(type) && ts < 8 && (bits >> (8 * ts - 1)) & 1) bits |= ~uint64_t{0} << (8 * ts);
  return static_cast<int64_t>(bits);
}

void storeInt(weftDataType_t type, void* buf, size_t i, int64_t v) {
  size_t ts = typeInfo(type).size;
  std::memcpy(static_cast<char*>(buf) + i * ts, &v, ts);
}

int64_t combineInt(weftDataType_t type, weftRedOp_t op, int64_t a, int64_t b) {
  uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  switch (op) {
    case weftProd:
      return static_cast<int64_t>(ua * ub);
    case weftMax:
      return isSigned(type) ? std::max(a, b) : static_cast<int64_t>(std::max(ua, ub));
    case weftMin:
      return isSigned(type) ? std::min(a, b) : static_cast<int64_t>(std::min(ua, ub));
    default:
      return static_cast<int64_t>(ua + ub);
  }
}

// Floating point through double: exact for the generator's small values, then rounded to the
// type after every step as a library working in the type would.
double combineFloat(weftRedOp_t op, double a, double b) {
  switch (op) {
    case weftProd:
      return a * b;
    case weftMax:
      return std::max(a, b);
    case weftMin:
      return std::min(a, b);
    default:
      return a + b;
  }
}

// One reduction step into acc (one element) from src[index].
void reduceStep(const CheckSpec& s, void* acc, const void* src, size_t index) {
  if (typeInfo(s.type).isFloat) {
    storeFromDouble(
        s.type, acc, 0,
        combineFloat(s.op, loadAsDouble(s.type, acc, 0), loadAsDouble(s.type, src, index)));
  } else {
    storeInt(s.type, acc, 0,
             combineInt(s.type, s.op, loadInt(s.type, acc, 0), loadInt(s.type, src, index)));
  }
}

void averageOf(const CheckSpec& s, void* acc) {
  if (typeInfo(s.type).isFloat) {
    storeFromDouble(s.type, acc, 0, loadAsDouble(s.type, acc, 0) / s.nranks);
  } else if (isSigned(s.type)) {
    storeInt(s.type, acc, 0, loadInt(s.type, acc, 0) / s.nranks);
  } else {
    uint64_t v = static_cast<uint64_t>(loadInt(s.type, acc, 0));
    storeInt(s.type, acc, 0, static_cast<int64_t>(v / static_cast<uint64_t>(s.nranks)));
  }
}

// Runs a collective on plain buffers: inputs[r] holds rank r's sendCount elements; returns
// each rank's receive buffer (recvCount elements).
std::vector<Bytes> simulate(const CheckSpec& s, const CollCounts& c,
                            const std::vector<Bytes>& inputs, bool reverseOrder) {
  size_t ts = typeInfo(s.type).size;
  int n = s.nranks;
  size_t cnt = c.paramCount;
  std::vector<Bytes> out(n, Bytes(std::max<size_t>(c.recvCount, 1) * ts, 0));
  auto copy = [&](int dstRank, size_t dstIndex, int srcRank, size_t srcIndex, size_t elems) {
    std::memcpy(out[dstRank].data() + dstIndex * ts, inputs[srcRank].data() + srcIndex * ts,
                elems * ts);
  };
  auto reduced = [&](size_t index) {
    int first = reverseOrder ? n - 1 : 0;
    Bytes acc(ts);
    std::memcpy(acc.data(), inputs[first].data() + index * ts, ts);
    for (int k = 1; k < n; ++k) {
      int r = reverseOrder ? n - 1 - k : k;
      reduceStep(s, acc.data(), inputs[r].data(), index);
    }
    if (s.op == weftAvg) averageOf(s, acc.data());
    return acc;
  };
  for (int me = 0; me < n; ++me) {
    switch (s.coll) {
      case Coll::kAllReduce:
      case Coll::kReduce:
      case Coll::kReduceScatter:
        for (size_t i = 0; i < c.recvCount; ++i) {
          size_t from = s.coll == Coll::kReduceScatter ? me * cnt + i : i;
          std::memcpy(out[me].data() + i * ts, reduced(from).data(), ts);
        }
        break;
      case Coll::kBroadcast:
        copy(me, 0, s.root, 0, c.recvCount);
        break;
      case Coll::kAllGather:
        for (int r = 0; r < n; ++r) {
          copy(me, r * cnt, r, 0, cnt);
        }
        break;
      case Coll::kAllToAll:
        for (int r = 0; r < n; ++r) {
          copy(me, r * cnt, r, me * cnt, cnt);
        }
        break;
      case Coll::kSendRecv:
        copy(me, 0, (me - 1 + n) % n, 0, c.recvCount);
        break;
      case Coll::kSend:
        if (sendRole(me, n) == SendRole::kReceiver) copy(me, 0, me - 1, 0, c.recvCount);
        break;
    }
  }
  return out;
}

// Checks every rank's simulated output against the reference; returns the total wrong count.
int64_t checkAll(const CheckSpec& s, const CollCounts& c, std::vector<Bytes>& outputs) {
  size_t ts = typeInfo(s.type).size;
  int64_t wrong = 0;
  for (int me = 0; me < s.nranks; ++me) {
    Bytes expected(std::max<size_t>(c.recvCount, 1) * ts);
    fillExpected(s, me, c, expected.data());
    wrong += countWrong(s, outputs[me].data(), expected.data(), expectedCount(s, me, c));
  }
  return wrong;
}

struct Scenario {
  Coll coll;
  weftRedOp_t op;
};

std::vector<Scenario> scenarios() {
  std::vector<Scenario> out;
  for (Coll c : {Coll::kAllReduce, Coll::kReduce, Coll::kReduceScatter}) {
    for (const OpInfo& op : allOps()) {
      out.push_back({c, op.op});
    }
  }
  for (Coll c :
       {Coll::kBroadcast, Coll::kAllGather, Coll::kAllToAll, Coll::kSendRecv, Coll::kSend}) {
    out.push_back({c, weftSum});
  }
  return out;
}

TEST(WeftPerfCheck, CorrectResultsPassAndCorruptionIsCounted) {
  for (const Scenario& sc : scenarios()) {
    for (const TypeInfo& t : allTypes()) {
      for (int n : {1, 2, 3, 5, 8}) {
        CheckSpec s{sc.coll, t.type, sc.op, n, n > 1 ? 1 : 0, 42};
        CollCounts c = collCounts(sc.coll, 37 * n, n);
        std::vector<Bytes> inputs(n, Bytes(c.sendCount * t.size));
        for (int r = 0; r < n; ++r) {
          fillInput(s, r, inputs[r].data(), c.sendCount);
        }
        std::string what = std::string(collName(sc.coll)) + " " + t.name + " op " +
                           std::to_string(sc.op) + " n " + std::to_string(n);
        for (bool reverse : {false, true}) {
          std::vector<Bytes> outputs = simulate(s, c, inputs, reverse);
          ASSERT_EQ(checkAll(s, c, outputs), 0) << what << (reverse ? " reversed" : "");
          // One corrupted element of the last rank that checks anything: a flipped bit in
          // its top byte (an exponent bit for floating point) is far outside any tolerance.
          int victim = sc.coll == Coll::kReduce ? s.root : n - 1;
          if (sc.coll == Coll::kSend) {
            victim = n % 2 == 0 ? n - 1 : n - 2;  // the last receiver
            if (victim < 0) continue;             // one rank: nothing is received
          }
          size_t at = c.recvCount / 2 * t.size + t.size - 1;
          outputs[victim][at] ^= 0x40;
          EXPECT_EQ(checkAll(s, c, outputs), 1) << what;
          // An output never written keeps the poison; an integer result may equal the
          // poison by chance, a floating-point one (NaN) never.
          fillPoison(t.type, outputs[victim].data(), outputs[victim].size());
          int64_t wrong = checkAll(s, c, outputs);
          int64_t all = static_cast<int64_t>(c.recvCount);
          if (t.isFloat) {
            EXPECT_EQ(wrong, all) << what;
          } else {
            EXPECT_GE(wrong, all * 9 / 10) << what;
          }
        }
      }
    }
  }
}

// What a call must leave alone: an out-of-place input, and a reduce leaf's output (poison).
TEST(WeftPerfCheck, ChangedInputsAndWrittenLeafOutputsAreCounted) {
  for (const TypeInfo& t : allTypes()) {
    CheckSpec s{Coll::kReduce, t.type, weftSum, 3, 0, 9};
    const CollCounts c = collCounts(s.coll, 10, 3);
    Bytes input(c.sendCount * t.size), output(c.recvCount * t.size);
    fillInput(s, 1, input.data(), c.sendCount);
    fillPoison(t.type, output.data(), output.size());
    EXPECT_EQ(countDisturbed(s, 1, c, input.data(), output.data(), false), 0) << t.name;
    input[2 * t.size] ^= 0x40;
    output[7 * t.size] ^= 0x01;
    output[8 * t.size] ^= 0x01;
    EXPECT_EQ(countDisturbed(s, 1, c, input.data(), output.data(), false), 3) << t.name;
    EXPECT_EQ(countDisturbed(s, 1, c, input.data(), output.data(), true), 0) << t.name;
    // The root's output is countWrong's to check; only its input counts here.
    fillInput(s, 0, input.data(), c.sendCount);
    EXPECT_EQ(countDisturbed(s, 0, c, input.data(), output.data(), false), 0) << t.name;
    input[0] ^= 0x01;
    EXPECT_EQ(countDisturbed(s, 0, c, input.data(), output.data(), false), 1) << t.name;
  }
}

TEST(WeftPerfCheck, FloatAverageWithinTolerance) {
  // A library may average by scaling each input by 1/n before summing.
  for (weftDataType_t type : {weftFloat16, weftBfloat16, weftFloat32, weftFloat64}) {
    int n = 7;
    CheckSpec s{Coll::kAllReduce, type, weftAvg, n, 0, 5};
    CollCounts c = collCounts(s.coll, 100, n);
    size_t ts = typeInfo(type).size;
    Bytes got(c.recvCount * ts), expected(c.recvCount * ts);
    for (size_t i = 0; i < c.recvCount; ++i) {
      double acc = 0;
      for (int r = 0; r < n; ++r) {
        Bytes scaled(ts);
        storeFromDouble(type, scaled.data(), 0, static_cast<double>(inputValue(s, r, i)) / n);
        acc = loadAsDouble(type, scaled.data(), 0) + acc;
        storeFromDouble(type, scaled.data(), 0, acc);
        acc = loadAsDouble(type, scaled.data(), 0);
      }
      storeFromDouble(type, got.data(), i, acc);
    }
    fillExpected(s, 0, c, expected.data());
    EXPECT_EQ(countWrong(s, got.data(), expected.data(), c.recvCount), 0) << type;
    storeFromDouble(type, got.data(), 3, loadAsDouble(type, got.data(), 3) + 1);
    EXPECT_EQ(countWrong(s, got.data(), expected.data(), c.recvCount), 1) << type;
  }
}

TEST(WeftPerfCheck, InputsAreDeterministicSmallAndSeeded) {
  CheckSpec s{Coll::kAllReduce, weftInt8, weftSum, 16, 0, 1};
  CheckSpec other = s;
  other.seed = 2;
  int differ = 0;
  for (size_t i = 0; i < 1000; ++i) {
    EXPECT_EQ(inputValue(s, 3, i), inputValue(s, 3, i));
    differ += inputValue(s, 3, i) != inputValue(other, 3, i);
    int64_t sum = 0;
    for (int r = 0; r < s.nranks; ++r) {
      int64_t v = inputValue(s, r, i);
      EXPECT_GE(v, 0);
      sum += v;
    }
    EXPECT_LE(sum, 127) << "int8 sums stay in range";
  }
  EXPECT_GT(differ, 500);
  // Data movement uses the type's whole exact range, so misplaced elements show.
  CheckSpec move{Coll::kAllGather, weftFloat16, weftSum, 4, 0, 1};
  int64_t lo = 0, hi = 0;
  for (size_t i = 0; i < 10000; ++i) {
    lo = std::min(lo, inputValue(move, 0, i));
    hi = std::max(hi, inputValue(move, 0, i));
  }
  EXPECT_LT(lo, -1000);
  EXPECT_GT(hi, 1000);
  EXPECT_LE(hi, 2048);
}

TEST(WeftPerfCheck, OnlyReduceRootChecks) {
  CheckSpec s{Coll::kReduce, weftFloat32, weftSum, 4, 2, 1};
  CollCounts c = collCounts(s.coll, 10, 4);
  EXPECT_EQ(expectedCount(s, 2, c), 10u);
  EXPECT_EQ(expectedCount(s, 0, c), 0u);
  s.coll = Coll::kAllGather;
  EXPECT_EQ(expectedCount(s, 0, collCounts(s.coll, 10, 4)), 8u);
}

// ---- report ----

TEST(WeftPerfReport, Header) {
  Options o = options({"all_reduce", "-b", "8", "-e", "1M", "-f", "4", "-t", "2"});
  EXPECT_EQ(headerLines(o).substr(0, headerLines(o).find('\n')),
            "# nThread 2 nGpus 1 minBytes 8 maxBytes 1048576 step: 4(factor) warmup iters: 5 "
            "iters: 20 agg iters: 1 validation: 1 graph: 0");
  Options bytes = options({"all_reduce", "-z", "1"});
  EXPECT_NE(headerLines(bytes).find("step: 1048576(bytes)"), std::string::npos);
  EXPECT_NE(headerLines(bytes).find("# Blocking Enabled"), std::string::npos);
  EXPECT_EQ(headerLines(bytes).find("# Buffers from weftMemAlloc"), std::string::npos);
  Options shared = options({"all_reduce", "-R", "1", "-J", "r.json"});
  EXPECT_TRUE(shared.sharedBuffers);
  EXPECT_NE(headerLines(shared).find("# Buffers from weftMemAlloc"), std::string::npos);
  EXPECT_NE(headerLines(shared).find("# Writing JSON output to r.json\n"), std::string::npos);
  EXPECT_EQ(rankLine(0, 1234, "host"),
            "#  Rank  0 Group  0 Pid   1234 on       host device  cpu\n");
  std::string table = tableHeader();
  EXPECT_NE(table.find("out-of-place"), std::string::npos);
  EXPECT_NE(table.find("#       size         count      type   redop    root     time   algbw   "
                       "busbw  #wrong     time   algbw   busbw  #wrong\n"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("#        (B)    (elements)                               (us)  (GB/s)  "
                       "(GB/s)             (us)  (GB/s)  (GB/s)        \n"),
            std::string::npos)
      << table;
  EXPECT_NE(tableHeader(true).find("root  cputime   algbw   busbw  #wrong  cputime   algbw"),
            std::string::npos)
      << tableHeader(true);
}

// Times as nccl-tests prints them (src/common.cu): two decimals below 100 us, one below 10,000,
// none above. Bandwidths: two decimals while they fit the column, then one, then none, then an
// exponent.
TEST(WeftPerfReport, Columns) {
  EXPECT_EQ(formatTime(0.1934e-6), "   0.19");
  EXPECT_EQ(formatTime(1.5e-6), "   1.50");
  EXPECT_EQ(formatTime(99.994e-6), "  99.99");
  EXPECT_EQ(formatTime(100e-6), "  100.0");
  EXPECT_EQ(formatTime(208.36e-6), "  208.4");
  EXPECT_EQ(formatTime(4181.73e-6), " 4181.7");
  EXPECT_EQ(formatTime(9999.94e-6), " 9999.9");
  EXPECT_EQ(formatTime(10e-3), "  10000");
  EXPECT_EQ(formatTime(80558.7e-6), "  80559");
  EXPECT_EQ(formatTime(0.5), " 500000");
  EXPECT_EQ(formatTime(9.9), "9900000");
  EXPECT_EQ(formatTime(12), "1.2e+07");
  EXPECT_EQ(formatColumn(0, 6), "  0.00");
  EXPECT_EQ(formatColumn(999.99, 6), "999.99");
  EXPECT_EQ(formatColumn(1234.5, 6), "1234.5");
  EXPECT_EQ(formatColumn(99999, 6), " 99999");
  EXPECT_EQ(formatColumn(1234567, 6), "1.2e+06");
}

TEST(WeftPerfReport, Rows) {
  EXPECT_EQ(rowStart(8, 2, "float", "sum", -1),
            "           8             2     float     sum      -1");
  EXPECT_EQ(rowResult({20.44e-6, Bandwidth{0.001, 0.002}, 0, std::nullopt}),
            "    20.44    0.00    0.00       0");
  EXPECT_EQ(rowResult({152.04e-6, Bandwidth{3.45, 3.45}, 12, std::nullopt}),
            "    152.0    3.45    3.45      12");
  EXPECT_EQ(rowResult({0.0123, Bandwidth{12.5, 1875.4}, std::nullopt, std::nullopt}),
            "    12300   12.50  1875.4     N/A");
  EXPECT_EQ(rowResult({1e-6, Bandwidth{1, 1}, 1234567, std::nullopt}),
            "     1.00    1.00    1.00  1.23457e+06");
}

TEST(WeftPerfOptions, BusyThreadsAndPercentiles) {
  Options plain = options({"all_reduce"});
  EXPECT_EQ(plain.busy, 0);
  EXPECT_FALSE(plain.percentiles);
  Options o = options({"all_reduce", "--busy", "3", "--percentiles"});
  EXPECT_EQ(o.busy, 3);
  EXPECT_TRUE(o.percentiles);
  EXPECT_FALSE(parse({"all_reduce", "--busy", "-1"}).options);
  EXPECT_FALSE(parse({"all_reduce", "--busy", "2000"}).options);
  const std::string header = headerLines(o);
  EXPECT_TRUE(contains(header, "# Busy: 3 compute threads per rank")) << header;
  EXPECT_TRUE(contains(header, "# Per call: each call timed on its own")) << header;
  EXPECT_FALSE(contains(headerLines(plain), "Busy")) << headerLines(plain);
}

// Nearest-rank percentiles: the smallest time at least that share of the calls stays within.
TEST(WeftPerfReport, CallTimes) {
  CallTimes none = callTimes({});
  EXPECT_EQ(none.max, 0);
  std::vector<double> calls;
  for (int i = 100; i >= 1; --i)
    calls.push_back(i * 1e-6);  // 1 .. 100 us, in reverse
  CallTimes t = callTimes(calls);
  EXPECT_DOUBLE_EQ(t.p50, 50e-6);
  EXPECT_DOUBLE_EQ(t.p99, 99e-6);
  EXPECT_DOUBLE_EQ(t.max, 100e-6);
  // 20 calls, one stalled: the median stays, p99 is the stall (the 20th of 20).
  std::vector<double> twenty(19, 2e-6);
  twenty.push_back(4e-3);
  t = callTimes(twenty);
  EXPECT_DOUBLE_EQ(t.p50, 2e-6);
  EXPECT_DOUBLE_EQ(t.p99, 4e-3);
  EXPECT_EQ(rowCallTimes(t), "     2.00   4000.0   4000.0");
  const std::string table = tableHeader(false, true);
  EXPECT_TRUE(contains(table, "#wrong      p50      p99      max\n")) << table;
  EXPECT_TRUE(contains(table, "out-of-place, per call")) << table;
  EXPECT_FALSE(contains(tableHeader(), "p50")) << tableHeader();
}

// The compute threads run, count their rounds, and stop when the load goes.
TEST(WeftPerfComputeLoad, ThreadsRunUntilDestroyed) {
  ComputeLoad load(2);
  EXPECT_EQ(load.threads(), 2);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (load.roundsPerSecond() == 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_GT(load.roundsPerSecond(), 0);
}

TEST(WeftPerfReport, Footer) {
  EXPECT_EQ(footer(0, 1.25, std::nullopt),
            "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 1.25 \n#\n");
  EXPECT_EQ(footer(2, 0, std::nullopt).substr(0, 32), "# Out of bounds values : 2 FAILE");
  EXPECT_EQ(footer(0, 1.25, 2.0),
            "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 1.25 FAILED\n#\n");
  EXPECT_EQ(footer(0, 2.5, 2.0),
            "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 2.5 OK\n#\n");
  EXPECT_TRUE(meetsMinimum(0, std::nullopt));
  EXPECT_TRUE(meetsMinimum(2, 2.0));
  EXPECT_FALSE(meetsMinimum(1.99, 2.0));
}

// ---- JSON results (-J) ----

nlohmann::json readJson(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

TEST(WeftPerfJson, SettingsRecordsAndSummary) {
  const std::string path = ::testing::TempDir() + "weft_perf_unit.json";
  Options o = options({"all_to_all", "-b", "1K", "-e", "2K", "-f", "2", "-t", "2"});
  {
    JsonReport json;
    std::string error;
    ASSERT_TRUE(json.open(path, &error)) << error;
    json.begin(o, 4);
    json.record(RowKey{1024, 64, "float", "none", -1},
                {20.5e-6, Bandwidth{0.05, 0.0375}, 0, std::nullopt},
                {22e-6, Bandwidth{0.045, 0.034}, 0, std::nullopt});
    json.record(RowKey{2048, 128, "float", "none", -1},
                {41e-6, Bandwidth{0.5, 0.375}, 3, CallTimes{40e-6, 45e-6, 46e-6}},
                Measurement{40e-6, Bandwidth{0.25, 0.125}, std::nullopt, std::nullopt});
    json.end(1, 0.179, 0.5);
  }
  nlohmann::json j = readJson(path);
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["config"]["collective"], "all_to_all");
  EXPECT_EQ(j["config"]["nranks"], 4);
  EXPECT_EQ(j["config"]["nthreads"], 2);
  EXPECT_EQ(j["config"]["step_factor"], 2);
  ASSERT_EQ(j["results"].size(), 2u);
  const nlohmann::json& first = j["results"][0];
  EXPECT_EQ(first["size"], 1024);
  EXPECT_EQ(first["count"], 64);
  EXPECT_EQ(first["type"], "float");
  EXPECT_EQ(first["redop"], "none");
  EXPECT_EQ(first["root"], -1);
  EXPECT_DOUBLE_EQ(first["out_of_place"]["time"].get<double>(), 20.5);
  EXPECT_DOUBLE_EQ(first["out_of_place"]["alg_bw"].get<double>(), 0.05);
  EXPECT_DOUBLE_EQ(first["out_of_place"]["bus_bw"].get<double>(), 0.0375);
  EXPECT_EQ(first["out_of_place"]["nwrong"], 0);
  EXPECT_DOUBLE_EQ(first["in_place"]["time"].get<double>(), 22);
  EXPECT_EQ(first["in_place"]["nwrong"], 0);
  const nlohmann::json& second = j["results"][1];
  EXPECT_EQ(second["out_of_place"]["nwrong"], 3);
  EXPECT_DOUBLE_EQ(second["out_of_place"]["p50_time"].get<double>(), 40);
  EXPECT_DOUBLE_EQ(second["out_of_place"]["p99_time"].get<double>(), 45);
  EXPECT_DOUBLE_EQ(second["out_of_place"]["max_time"].get<double>(), 46);
  EXPECT_FALSE(first["out_of_place"].contains("p50_time"));
  EXPECT_DOUBLE_EQ(second["in_place"]["time"].get<double>(), 40);
  EXPECT_TRUE(second["in_place"]["nwrong"].is_null());
  EXPECT_EQ(j["out_of_bounds"]["count"], 1);
  EXPECT_EQ(j["out_of_bounds"]["okay"], false);
  EXPECT_DOUBLE_EQ(j["average_bus_bandwidth"]["bandwidth"].get<double>(), 0.179);
  EXPECT_DOUBLE_EQ(j["average_bus_bandwidth"]["minimum"].get<double>(), 0.5);
  EXPECT_EQ(j["average_bus_bandwidth"]["okay"], false);
  std::remove(path.c_str());
}

TEST(WeftPerfJson, CpuTimeAndUnwritablePath) {
  const std::string path = ::testing::TempDir() + "weft_perf_unit_cpu.json";
  {
    JsonReport json;
    std::string error;
    ASSERT_TRUE(json.open(path, &error)) << error;
    json.begin(options({"all_reduce", "-C", "1"}), 1);
    json.record(RowKey{8, 2, "float", "sum", -1}, {1e-6, Bandwidth{}, 0, std::nullopt},
                {2e-6, Bandwidth{}, 0, std::nullopt});
    json.end(0, 0, std::nullopt);
  }
  nlohmann::json j = readJson(path);
  EXPECT_DOUBLE_EQ(j["results"][0]["out_of_place"]["cpu_time"].get<double>(), 1);
  EXPECT_FALSE(j["results"][0]["out_of_place"].contains("time"));
  EXPECT_TRUE(j["average_bus_bandwidth"]["minimum"].is_null());
  EXPECT_EQ(j["average_bus_bandwidth"]["okay"], true);
  std::remove(path.c_str());

  JsonReport bad;
  std::string error;
  EXPECT_FALSE(bad.open("/nonexistent-dir/r.json", &error));
  EXPECT_TRUE(contains(error, "/nonexistent-dir/r.json")) << error;
}

}  // namespace
}  // namespace weft::perf
