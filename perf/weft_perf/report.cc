#include "perf/weft_perf/report.h"

#include <cstdio>

namespace weft::perf {
namespace {

template <typename... Args>
std::string format(const char* fmt, Args... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

}  // namespace

std::string headerLines(const Options& o) {
  bool factor = o.stepFactor > 1;
  std::string s = format(
      "# nThread 1 nGpus 1 minBytes %zu maxBytes %zu step: %zu(%s) warmup iters: %d iters: %d "
      "agg iters: %d validation: %d graph: 0\n",
      o.minBytes, o.maxBytes, factor ? o.stepFactor : o.stepBytes, factor ? "factor" : "bytes",
      o.warmupIters, o.iters, o.aggIters, o.check);
  if (o.blocking) s += "# Blocking Enabled: NULL stream, each call returns when it is done\n";
  if (o.sharedBuffers) s += "# Buffers from weftMemAlloc: ranks on one host map each other's\n";
  s += "#\n# Using devices\n";
  return s;
}

std::string rankLine(int rank, int pid, const std::string& host) {
  return format("#  Rank %2d Group %2d Pid %6d on %10s device %4s\n", rank, 0, pid, host.c_str(),
                "cpu");
}

std::string tableHeader() {
  std::string s = "#\n";
  s += format(
      "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place"
      "          \n",
      "", "", "", "", "");
  s += format("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s\n", "size",
              "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
              "busbw", "#wrong");
  s += format("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s\n", "(B)",
              "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)",
              "");
  return s;
}

std::string rowStart(size_t bytes, size_t count, const char* type, const char* op, int root) {
  return format("%12zu  %12zu  %8s  %6s  %6d", bytes, count, type, op, root);
}

std::string formatTime(double seconds) {
  double us = seconds * 1e6;
  if (us >= 10000.0) return format("%7.0f", us);
  if (us >= 100.0) return format("%7.1f", us);
  // Below 1 us, 0.01 us is 1-5% of a call: a tie with a baseline printed to 0.001 could read as
  // a loss or a win.
  if (us < 1.0) return format("%7.3f", us);
  return format("%7.2f", us);
}

std::string rowResult(double seconds, const Bandwidth& bw, std::optional<int64_t> wrong) {
  std::string w = wrong ? format("%5lld", static_cast<long long>(*wrong)) : format("%5s", "N/A");
  return format("  %7s  %6.2f  %6.2f  %s", formatTime(seconds).c_str(), bw.algBw, bw.busBw,
                w.c_str());
}

std::string rowNotRun() {
  return format("  %7s  %6s  %6s  %5s", "N/A", "N/A", "N/A", "N/A");
}

std::string footer(int failedMeasurements, double avgBusBw) {
  return format("# Out of bounds values : %d %s\n# Avg bus bandwidth    : %g \n#\n",
                failedMeasurements, failedMeasurements ? "FAILED" : "OK", avgBusBw);
}

}  // namespace weft::perf
