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
      "# nThread %d nGpus 1 minBytes %zu maxBytes %zu step: %zu(%s) warmup iters: %d iters: %d "
      "agg iters: %d validation: %d graph: 0\n",
      o.threads, o.minBytes, o.maxBytes, factor ? o.stepFactor : o.stepBytes,
      factor ? "factor" : "bytes", o.warmupIters, o.iters, o.aggIters, o.check);
  if (o.blocking) s += "# Blocking Enabled: NULL stream, each call returns when it is done\n";
  if (o.sharedBuffers) s += "# Buffers from weftMemAlloc: ranks on one host map each other's\n";
  if (!o.outputFile.empty()) s += "# Writing JSON output to " + o.outputFile + "\n";
  if (o.busy > 0) {
    s += format("# Busy: %d compute thread%s per rank, all through the run\n", o.busy,
                o.busy == 1 ? "" : "s");
  }
  if (o.percentiles)
    s += "# Per call: each call timed on its own, p50/p99/max of the slowest rank\n";
  s += "#\n# Using devices\n";
  return s;
}

std::string rankLine(int rank, int pid, const std::string& host) {
  return format("#  Rank %2d Group %2d Pid %6d on %10s device %4s\n", rank, 0, pid, host.c_str(),
                "cpu");
}

std::string tableHeader(bool cpuTime, bool percentiles) {
  const char* time = cpuTime ? "cputime" : "time";
  std::string s = "#\n";
  s += format(
      "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place"
      "          %s\n",
      "", "", "", "", "", percentiles ? "   out-of-place, per call" : "");
  s += format("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s", "size",
              "count", "type", "redop", "root", time, "algbw", "busbw", "#wrong", time, "algbw",
              "busbw", "#wrong");
  if (percentiles) s += format("  %7s  %7s  %7s", "p50", "p99", "max");
  s += format("\n# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s", "(B)",
              "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)",
              "");
  if (percentiles) s += format("  %7s  %7s  %7s", "(us)", "(us)", "(us)");
  return s + "\n";
}

std::string rowStart(size_t bytes, size_t count, const char* type, const char* op, int root) {
  return format("%12zu  %12zu  %8s  %6s  %6d", bytes, count, type, op, root);
}

std::string formatColumn(double value, int width) {
  int digits = 0;  // of the integer part
  for (double power = 1; value >= power && digits <= width; power *= 10) {
    ++digits;
  }
  if (digits + 3 <= width) return format("%*.2f", width, value);
  if (digits + 2 <= width) return format("%*.1f", width, value);
  if (digits <= width) return format("%*.0f", width, value);
  return format("%*.1e", width, value);
}

std::string formatTime(double seconds) {
  const double us = seconds * 1e6;
  if (us >= 1e7) return formatColumn(us, 7);  // past the column: an exponent, as formatColumn
  if (us >= 10000) return format("%7.0f", us);
  if (us >= 100) return format("%7.1f", us);
  return format("%7.2f", us);
}

std::string rowResult(const Measurement& m) {
  std::string wrong = m.wrong ? format("%6g", static_cast<double>(*m.wrong)) : format("%6s", "N/A");
  return format("  %7s  %6s  %6s  %s", formatTime(m.seconds).c_str(),
                formatColumn(m.bw.algBw, 6).c_str(), formatColumn(m.bw.busBw, 6).c_str(),
                wrong.c_str());
}

std::string rowCallTimes(const CallTimes& t) {
  return format("  %7s  %7s  %7s", formatTime(t.p50).c_str(), formatTime(t.p99).c_str(),
                formatTime(t.max).c_str());
}

bool meetsMinimum(double avgBusBw, std::optional<double> minBusBw) {
  return !minBusBw || avgBusBw >= *minBusBw;
}

std::string footer(int failedMeasurements, double avgBusBw, std::optional<double> minBusBw) {
  const char* verdict = !minBusBw ? "" : meetsMinimum(avgBusBw, minBusBw) ? "OK" : "FAILED";
  return format("# Out of bounds values : %d %s\n# Avg bus bandwidth    : %g %s\n#\n",
                failedMeasurements, failedMeasurements ? "FAILED" : "OK", avgBusBw, verdict);
}

}  // namespace weft::perf
