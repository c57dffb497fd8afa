#include "perf/weft_perf/json_report.h"

#include <cerrno>
#include <cstring>

#include <nlohmann/json.hpp>

namespace weft::perf {
namespace {

constexpr int kFormatVersion = 1;

nlohmann::json measurementJson(const Measurement& m, bool cpuTime) {
  nlohmann::json j;
  j[cpuTime ? "cpu_time" : "time"] = m.seconds * 1e6;  // microseconds, as the table
  j["alg_bw"] = m.bw.algBw;
  j["bus_bw"] = m.bw.busBw;
  j["nwrong"] = m.wrong ? nlohmann::json(*m.wrong) : nlohmann::json();  // null: not checked
  if (m.calls) {  // weft's own keys: nccl-tests has no per-call times
    j["p50_time"] = m.calls->p50 * 1e6;
    j["p99_time"] = m.calls->p99 * 1e6;
    j["max_time"] = m.calls->max * 1e6;
  }
  return j;
}

}  // namespace

JsonReport::~JsonReport() {
  if (file_ != nullptr) std::fclose(file_);
}

bool JsonReport::open(const std::string& path, std::string* error) {
  file_ = std::fopen(path.c_str(), "w");
  if (file_ == nullptr) *error = "-J: cannot write '" + path + "': " + std::strerror(errno);
  return file_ != nullptr;
}

void JsonReport::begin(const Options& o, int nranks) {
  cpuTime_ = o.reportCpuTime;
  nlohmann::json config;
  config["collective"] = collName(o.coll);
  config["nranks"] = nranks;
  config["nthreads"] = o.threads;
  config["minimum_bytes"] = o.minBytes;
  config["maximum_bytes"] = o.maxBytes;
  config[o.stepFactor > 1 ? "step_factor" : "step_bytes"] =
      o.stepFactor > 1 ? o.stepFactor : o.stepBytes;
  config["warmup_iters"] = o.warmupIters;
  config["iterations"] = o.iters;
  config["aggregated_iterations"] = o.aggIters;
  config["run_cycles"] = o.runCycles;
  config["validation"] = o.check;
  config["blocking_collectives"] = o.blocking;
  config["average"] = static_cast<int>(o.timeAcrossRanks);
  config["report_cputime"] = o.reportCpuTime;
  config["busy_threads_per_rank"] = o.busy;
  config["percentiles"] = o.percentiles;
  write("{\"version\":" + std::to_string(kFormatVersion) + ",\"config\":" + config.dump() +
        ",\"results\":[");
}

void JsonReport::record(const RowKey& key, const Measurement& outOfPlace,
                        const Measurement& inPlace) {
  nlohmann::json j;
  j["size"] = key.bytes;
  j["count"] = key.count;
  j["type"] = key.type;
  j["redop"] = key.op;
  j["root"] = key.root;
  j["out_of_place"] = measurementJson(outOfPlace, cpuTime_);
  j["in_place"] = measurementJson(inPlace, cpuTime_);
  write(std::string(firstRecord_ ? "\n" : ",\n") + j.dump());
  firstRecord_ = false;
}

void JsonReport::end(int failedMeasurements, double avgBusBw, std::optional<double> minBusBw) {
  nlohmann::json bounds, bandwidth;
  bounds["count"] = failedMeasurements;
  bounds["okay"] = failedMeasurements == 0;
  bandwidth["bandwidth"] = avgBusBw;
  bandwidth["minimum"] = minBusBw ? nlohmann::json(*minBusBw) : nlohmann::json();
  bandwidth["okay"] = meetsMinimum(avgBusBw, minBusBw);
  write("\n],\"out_of_bounds\":" + bounds.dump() +
        ",\"average_bus_bandwidth\":" + bandwidth.dump() + "}\n");
}

// Flushed at once, so the file holds every row already printed.
void JsonReport::write(const std::string& text) {
  std::fputs(text.c_str(), file_);
  std::fflush(file_);
}

}  // namespace weft::perf
