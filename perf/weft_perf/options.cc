#include "perf/weft_perf/options.h"

#include <cmath>
#include <cstdlib>
#include <limits>

#include <CLI/CLI.hpp>

namespace weft::perf {
namespace {

constexpr const char* kDescription =
    "weft-perf: measures one collective over a range of sizes, as nccl-tests does, and checks\n"
    "the results. Ranks come from weftCommInitFromEnv: run it under weft-run, mpirun or srun.\n\n"
    "usage: weft-perf COLLECTIVE [flags]   (all_reduce all_gather reduce_scatter broadcast\n"
    "                                       reduce all_to_all sendrecv send, or *_perf)";

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
      ->type_name("SIZE");
}

std::string expandTypes(const std::string& name, Options& o) {
  if (name == "all") {
    o.types = allTypes();
    return "";
  }
  auto t = typeFromName(name);
  if (!t) return "-d: unknown data type '" + name + "'";
  o.types = {*t};
  return "";
}

std::string expandOps(const std::string& name, Options& o) {
  if (name == "all") {
    o.ops = allOps();
    return "";
  }
  auto op = opFromName(name);
  if (!op) return "-o: unknown reduction '" + name + "' (sum prod max min avg all)";
  o.ops = {*op};
  return "";
}

std::string checkRanges(const Options& o, int threads, int gpus, int average) {
  if (threads != 1 || gpus != 1) {
    return "-t and -g must be 1: weft-perf runs one rank per process (use weft-run -n N)";
  }
  if (o.minBytes > o.maxBytes) return "minbytes is larger than maxbytes";
  if (o.stepFactor <= 1 && o.stepBytes == 0) return "stepbytes must be > 0 when stepfactor <= 1";
  if (o.iters < 1 || o.aggIters < 1) return "iters and agg_iters must be >= 1";
  if (o.warmupIters < 0 || o.check < 0) return "warmup_iters and check must be >= 0";
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

ParseResult parseOptions(int argc, const char* const* argv) {
  Options o;
  ParseResult result;
  std::optional<Coll> fromProgramName = collFromName(baseName(argc > 0 ? argv[0] : nullptr));
  std::string collName, typeName = "float", opName = "sum";
  int threads = 1, gpus = 1, blocking = 0, average = 3, registered = 0;
  size_t stepFactor = o.stepFactor;

  CLI::App app(kDescription, "weft-perf");
  app.add_option("collective", collName, "The collective to measure")
      ->required(!fromProgramName.has_value());
  addSize(app, "-b,--minbytes", o.minBytes, "Smallest size (default 32M)");
  addSize(app, "-e,--maxbytes", o.maxBytes, "Largest size (default 32M)");
  addSize(app, "-i,--stepbytes", o.stepBytes, "Size increment when stepfactor is 1 (default 1M)");
  app.add_option("-f,--stepfactor", stepFactor, "Size multiplier (default 1: use stepbytes)");
  app.add_option("-n,--iters", o.iters, "Timed iterations (default 20)");
  app.add_option("-w,--warmup_iters", o.warmupIters, "Warmup iterations (default 5)");
  app.add_option("-m,--agg_iters", o.aggIters,
                 "Calls grouped per iteration with weftGroupStart/End (default 1)");
  app.add_option("-c,--check", o.check, "Validation runs per measurement, 0 to skip (default 1)");
  app.add_option("-d,--datatype", typeName,
                 "int8 uint8 int32 uint32 int64 uint64 half float double bfloat16, or all "
                 "(default float)");
  app.add_option("-o,--op", opName, "sum prod max min avg, or all (default sum)");
  app.add_option("-r,--root", o.root, "Root of broadcast and reduce, -1 for all (default 0)");
  app.add_option("-z,--blocking", blocking,
                 "1: blocking calls on the NULL stream; 0: a weft CPU stream (default 0)");
  app.add_option("-R,--local_register", registered,
                 "1: buffers from weftMemAlloc, which ranks on one host map, so collectives go "
                 "mapped; 0: aligned_alloc (default 0)")
      ->check(CLI::Range(0, 1));
  app.add_option("-a,--average", average,
                 "Time across ranks: 0 rank 0, 1 average, 2 min, 3 max (default 3)");
  app.add_option("-t,--nthreads", threads, "Threads per process: only 1");
  app.add_option("-g,--ngpus", gpus, "Devices per thread: only 1");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    result.message = app.help();
    return result;
  } catch (const CLI::ParseError& e) {
    result.exitCode = 2;
    result.message = std::string("weft-perf: ") + e.what() + "\nRun with --help for more.\n";
    return result;
  }

  std::string error;
  if (!collName.empty()) {
    fromProgramName = collFromName(collName);
    if (!fromProgramName) error = "unknown collective '" + collName + "'";
  }
  if (error.empty()) error = expandTypes(typeName, o);
  if (error.empty()) error = expandOps(opName, o);
  o.stepFactor = stepFactor;
  o.blocking = blocking != 0;
  o.sharedBuffers = registered != 0;
  if (error.empty()) error = checkRanges(o, threads, gpus, average);
  if (!error.empty()) {
    result.exitCode = 2;
    result.message = "weft-perf: " + error + "\n";
    return result;
  }
  o.coll = *fromProgramName;
  o.timeAcrossRanks = static_cast<TimeAcrossRanks>(average);
  result.options = std::move(o);
  return result;
}

}  // namespace weft::perf
