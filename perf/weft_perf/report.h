// The nccl-tests report: header, one row per size, summary. Rank 0 prints these.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "perf/weft_perf/coll.h"
#include "perf/weft_perf/options.h"

namespace weft::perf {

// "# nThread 1 nGpus 1 minBytes ... validation: 1 graph: 0" and what follows it up to the
// rank lines.
std::string headerLines(const Options& options);
// "#  Rank  0 Group  0 Pid   1234 on       host device  cpu"
std::string rankLine(int rank, int pid, const std::string& host);
// The three column-title lines.
std::string tableHeader();
// size, count, type, redop and root columns.
std::string rowStart(size_t bytes, size_t count, const char* type, const char* op, int root);
// time, algbw, busbw and #wrong of one measurement; no wrong count prints N/A.
std::string rowResult(double seconds, const Bandwidth& bw, std::optional<int64_t> wrong);
// The same columns for a measurement that was not run.
std::string rowNotRun();
// "# Out of bounds values : 0 OK" and "# Avg bus bandwidth    : X".
std::string footer(int failedMeasurements, double avgBusBw);

// Microseconds with 2, 1 or 0 decimals as the value grows, 7 wide.
std::string formatTime(double seconds);

}  // namespace weft::perf
