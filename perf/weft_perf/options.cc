#include "perf/weft_perf/options.h"

#include <cmath>
#include <cstdlib>
#include <limits>

#include <CLI/CLI.hpp>

#include "tools/version.h"

namespace weft::perf {
namespace {

constexpr const char* kDescription =
    "weft-perf: measures one collective over a range of sizes, as nccl-tests does, and checks\n"
    "the results. Ranks come from the launcher (weft-run, mpirun, srun, torchrun); without one\n"
    "it runs as one process. Each process runs -t ranks as threads.\n\n"
    "usage: weft-perf COLLECTIVE [flags]   (COLLECTIVE: all_reduce all_gather reduce_scatter\n"
    "                                       broadcast reduce all_to_all sendrecv send, or *_perf)";

std::string baseName(const char* path) {
  std::string_view p(path ? path : "");
  size_t slash = p.rfind('/');
  return std::string(slash == std::string_view::npos ? p : p.substr(slash + 1));
}

// A CLI11 option whose text goes through parseSize.
CLI::Option* addSize(CLI::App& app, const char* flags, size_t& target, const char* help) {
  return app
      .add_option_function<std::string>(
          flags,
          [&target, flags](const std::string& text) {
            auto size = parseSize(text);
            if (!size) throw CLI::ValidationError(flags, "not a size: '" + text + "'");
            target = *size;
          },
          help)
      ->type_name("SIZE")
      ->default_str(std::to_string(target));
}

std::string expandTypes(const std::string& name, Options& o) {
  if (name == "all") {
    o.types = allTypes();
    return "";
  }
  auto t = typeFromName(name);
  if (!t) return "-d: unknown data type '" + name + "'; known: " + typeNames() + ", or all";
  o.types = {*t};
  return "";
}

std::string expandOps(const std::string& name, Options& o) {
  if (name == "all") {
    o.ops = allOps();
    return "";
  }
  auto op = opFromName(name);
  if (!op) return "-o: unknown reduction '" + name + "'; known: " + opNames() + ", or all";
  o.ops = {*op};
  return "";
}

// A bandwidth in GB/s: a finite number >= 0 and nothing after it.
std::optional<double> parseBandwidth(const std::string& text) {
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(value) || value < 0) return std::nullopt;
  return value;
}

std::string checkRanges(const Options& o, int gpus, int graphs, int average) {
  if (gpus != 1) return "-g must be 1: a rank is a CPU thread (use -t for threads)";
  if (graphs != 0) {
    return "-G " + std::to_string(graphs) +
           ": weft runs calls on CPU streams and has no CUDA graphs; only -G 0";
  }
  if (o.threads < 1) return "-t must be at least 1";
  if (o.minBytes > o.maxBytes) return "minbytes is larger than maxbytes";
  if (o.stepFactor <= 1 && o.stepBytes == 0) return "stepbytes must be > 0 when stepfactor <= 1";
  if (o.iters < 1 || o.aggIters < 1) return "iters and agg_iters must be >= 1";
  if (o.warmupIters < 0 || o.check < 0) return "warmup_iters and check must be >= 0";
  if (o.runCycles < 0) return "run_cycles must be >= 0 (0 repeats until stopped)";
  if (o.root < -1) return "root must be a rank, or -1 for all";
  if (average < 0 || average > 3) return "average must be 0 (rank 0), 1 (avg), 2 (min) or 3 (max)";
  return "";
}

}  // namespace

std::optional<size_t> parseSize(std::string_view text) {
  std::string s(text);
  char* end = nullptr;
  double value = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || !std::isfinite(value) || value < 0) return std::nullopt;
  std::string_view suffix(end);
  double unit = 1;
  if (suffix == "K" || suffix == "k") {
    unit = 1024.0;
  } else if (suffix == "M" || suffix == "m") {
    unit = 1024.0 * 1024;
  } else if (suffix == "G" || suffix == "g") {
    unit = 1024.0 * 1024 * 1024;
  } else if (!suffix.empty()) {
    return std::nullopt;
  }
  double bytes = value * unit;
  if (bytes >= static_cast<double>(std::numeric_limits<size_t>::max())) return std::nullopt;
  return static_cast<size_t>(bytes);
}

std::vector<size_t> sizeList(const Options& o) {
  std::vector<size_t> sizes;
  size_t size = o.minBytes;
  while (size <= o.maxBytes) {
    sizes.push_back(size);
    size_t next;
    if (o.stepFactor > 1) {
      // 0 times anything stays 0: go on from 1 byte.
      if (size == 0) {
        next = 1;
      } else if (__builtin_mul_overflow(size, o.stepFactor, &next)) {
        break;
      }
    } else if (__builtin_add_overflow(size, o.stepBytes, &next)) {
      break;
    }
    size = next;
  }
  return sizes;
}

ParseResult parseOptions(int argc, const char* const* argv, const char* minBusBwFromEnv) {
  Options o;
  ParseResult result;
  auto fail = [&result](const std::string& error) {
    result.exitCode = 2;
    result.message = "weft-perf: " + error + "\n";
    return result;
  };
  std::optional<Coll> fromProgramName = collFromName(baseName(argc > 0 ? argv[0] : nullptr));
  std::string collName, typeName = "float", opName = "sum", minBusBw;
  int gpus = 1, graphs = 0, blocking = 0, cpuTime = 0, registered = 0;
  int average = static_cast<int>(o.timeAcrossRanks);
  size_t stepFactor = o.stepFactor;

  CLI::App app(kDescription, "weft-perf");
  app.option_defaults()->always_capture_default();
  app.set_version_flag("--version", weft::tools::versionText("weft-perf"));
  app.add_option("collective", collName, "The collective to measure")
      ->required(!fromProgramName.has_value());
  addSize(app, "-b,--minbytes", o.minBytes, "Smallest size");
  addSize(app, "-e,--maxbytes", o.maxBytes, "Largest size");
  addSize(app, "-i,--stepbytes", o.stepBytes, "Size increment when stepfactor is 1");
  app.add_option("-f,--stepfactor", stepFactor, "Size multiplier (1: add stepbytes instead)");
  app.add_option("-n,--iters", o.iters, "Timed iterations");
  app.add_option("-w,--warmup_iters", o.warmupIters, "Warmup iterations");
  app.add_option("-m,--agg_iters", o.aggIters, "Calls grouped per iteration (weftGroupStart/End)");
  app.add_option("-N,--run_cycles", o.runCycles,
                 "Sweeps over the sizes, each printed; 0 repeats them until stopped");
  app.add_option("-c,--check", o.check, "Validation runs per measurement, 0 to skip");
  app.add_option("-d,--datatype", typeName, "Data type: " + typeNames() + ", or all");
  app.add_option("-o,--op", opName, "Reduction: " + opNames() + ", or all");
  app.add_option("-r,--root", o.root, "Root of broadcast and reduce, -1 for every rank in turn");
  app.add_option("-z,--blocking", blocking,
                 "1: blocking calls on the NULL stream; 0: a weft CPU stream per rank");
  app.add_option("-R,--local_register", registered,
                 "1: buffers from weftMemAlloc, which ranks on one host map, so collectives go "
                 "mapped; 0: aligned_alloc")
      ->check(CLI::Range(0, 1));
  app.add_option("-a,--average", average,
                 "Time across ranks: 0 rank 0, 1 average, 2 minimum, 3 maximum");
  app.add_option("-t,--nthreads", o.threads,
                 "Ranks per process, each a thread: the world is processes x threads");
  app.add_option("-g,--ngpus", gpus, "Devices per thread: only 1");
  app.add_option("-T,--timeout", o.timeoutSeconds,
                 "Seconds a call may wait before the run fails with an error (sets WEFT_TIMEOUT); "
                 "0: WEFT_TIMEOUT's own, 300 unless set")
      ->check(CLI::Range(0, 1000000));
  app.add_option("-C,--report_cputime", cpuTime,
                 "1: report the time until the calls returned (CPU time), not until they "
                 "completed; bandwidths stay from the completion time")
      ->check(CLI::Range(0, 1));
  app.add_option("-J,--output_file", o.outputFile,
                 "Also write the results to this file as JSON, one record per size "
                 "(default: none)")
      ->type_name("FILE");
  app.add_option("-G,--cudagraph", graphs,
                 "CUDA graph launches: only 0 (calls run on CPU streams)");
  app.add_option("--busy", o.busy,
                 "Compute threads per rank, each a fixed arithmetic loop, running all through the "
                 "run as a training step's compute runs beside its collectives")
      ->check(CLI::Range(0, 1024));
  app.add_flag("--percentiles", o.percentiles,
               "Time each call on its own (a stream waits for each) and add the out-of-place "
               "calls' p50, p99 and max (across ranks: each call's slowest rank; below 100 "
               "calls, p99 is the slowest)");
  app.add_option(
         "--min_bw", minBusBw,
         std::string("Fail the run if the average bus bandwidth is below this (default: $") +
             kMinBusBwVariable + ", else no check)")
      ->type_name("GB/S");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    result.message = app.help();
    return result;
  } catch (const CLI::CallForVersion& e) {
    result.message = e.what() + std::string("\n");
    return result;
  } catch (const CLI::ExtrasError&) {
    // CLI11 lists them last first; name them as they were typed.
    std::string extras;
    for (const std::string& a : app.remaining()) {
      extras += " " + a;
    }
    return fail("unexpected arguments:" + extras + "\nRun with --help for more.");
  } catch (const CLI::ParseError& e) {
    return fail(std::string(e.what()) + "\nRun with --help for more.");
  }

  std::string error;
  if (!collName.empty()) {
    fromProgramName = collFromName(collName);
    if (!fromProgramName) error = "unknown collective '" + collName + "'; known: " + collNames();
  }
  if (error.empty()) error = expandTypes(typeName, o);
  if (error.empty()) error = expandOps(opName, o);
  if (error.empty() && !minBusBw.empty()) {
    o.minBusBw = parseBandwidth(minBusBw);
    if (!o.minBusBw) error = "--min_bw: '" + minBusBw + "' is not a bandwidth in GB/s";
  } else if (error.empty() && minBusBwFromEnv != nullptr && *minBusBwFromEnv != '\0') {
    o.minBusBw = parseBandwidth(minBusBwFromEnv);
    if (!o.minBusBw) {
      error =
          std::string(kMinBusBwVariable) + "='" + minBusBwFromEnv + "' is not a bandwidth in GB/s";
    }
  }
  o.stepFactor = stepFactor;
  o.blocking = blocking != 0;
  o.sharedBuffers = registered != 0;
  o.reportCpuTime = cpuTime != 0;
  if (error.empty()) error = checkRanges(o, gpus, graphs, average);
  if (!error.empty()) return fail(error);
  o.coll = *fromProgramName;
  o.timeAcrossRanks = static_cast<TimeAcrossRanks>(average);
  result.options = std::move(o);
  return result;
}

}  // namespace weft::perf
