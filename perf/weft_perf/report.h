// The nccl-tests report: header, one row per size, summary. Rank 0 prints these.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "perf/weft_perf/call_times.h"
#include "perf/weft_perf/coll.h"
#include "perf/weft_perf/options.h"

namespace weft::perf {

// "# nThread 1 nGpus 1 minBytes ... validation: 1 graph: 0" and what follows it up to the
// rank lines.
std::string headerLines(const Options& options);
// "#  Rank  0 Group  0 Pid   1234 on       host device  cpu"
std::string rankLine(int rank, int pid, const std::string& host);
// The three column-title lines; the time columns are "cputime" with -C; with percentiles, three
// more columns for the out-of-place calls' p50, p99 and max.
std::string tableHeader(bool cpuTime = false, bool percentiles = false);
// size, count, type, redop and root columns.
std::string rowStart(size_t bytes, size_t count, const char* type, const char* op, int root);

// One measurement: the reported time (-C: until the calls returned), the bandwidths (always
// from the time until they completed) and the wrong elements, none where not checked.
struct Measurement {
  double seconds = 0;
  Bandwidth bw;
  std::optional<int64_t> wrong;
  std::optional<CallTimes> calls;  // with --percentiles
};
// time, algbw, busbw and #wrong of one measurement; no wrong count prints N/A.
std::string rowResult(const Measurement& m);
// p50, p99 and max in the time column's format.
std::string rowCallTimes(const CallTimes& t);
// "# Out of bounds values : 0 OK" and "# Avg bus bandwidth    : X", then OK or FAILED where a
// minimum is given.
std::string footer(int failedMeasurements, double avgBusBw, std::optional<double> minBusBw);
// Whether the average bus bandwidth passes the minimum (always without one).
bool meetsMinimum(double avgBusBw, std::optional<double> minBusBw);

// A column as nccl-tests prints it: `width` characters, with two decimals while they fit, then
// one, then none, then in exponent form.
std::string formatColumn(double value, int width);
// Microseconds in the 7-character time column, by nccl-tests' rule: two decimals below 100 us,
// one below 10,000 us, none above (an exponent past the column).
std::string formatTime(double seconds);

}  // namespace weft::perf
