// weft-train run as users run it, under weft-run: every mode at 1-4 ranks ends a 20-step run
// with the parameters of a 1-rank run of the same global batch; the memory each rank holds and
// the bytes it sends per step match ZeRO's formulas (fp32 Adam); the default model learns the
// text; bad input gives clear errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/tools/process.h"

namespace weft::test {
namespace {

// A small model, so that 17 runs take seconds.
const std::vector<std::string> kSmall = {"--context", "8",        "--embed", "8",       "--hidden",
                                         "32",        "--blocks", "2",       "--batch", "24"};

std::string tempPath(const std::string& name) {
  return ::testing::TempDir() + "weft_train_" + std::to_string(getpid()) + "_" + name;
}

ProcessResult train(int ranks, std::vector<std::string> args, std::vector<std::string> env = {}) {
  std::vector<std::string> argv = {"/usr/bin/env"};
  argv.insert(argv.end(), env.begin(), env.end());
  argv.insert(argv.end(),
              {WEFT_RUN_PATH, "-n", std::to_string(ranks), "--timeout", "120", WEFT_TRAIN_PATH});
  argv.insert(argv.end(), args.begin(), args.end());
  return runProcess(argv, 150);
}

std::vector<float> readFloats(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<float> out(bytes.size() / sizeof(float));
  std::copy(bytes.begin(), bytes.begin() + static_cast<long>(out.size() * sizeof(float)),
            reinterpret_cast<char*>(out.data()));
  return out;
}

// The words after "key" in rank 0's last step line, as numbers: {"loss": ..., "params": ...}.
std::map<std::string, double> lastStep(const std::string& out) {
  std::map<std::string, double> fields;
  for (const std::string& line : splitLines(out)) {
    if (line.find("] step ") == std::string::npos && line.rfind("step ", 0) != 0) continue;
    std::istringstream in(line.substr(line.find("step ")));
    std::string key, value;
    fields.clear();
    while (in >> key) {
      if (key == "skipped:") break;
      if (key == "mem") continue;
      if (!(in >> value)) break;
      fields[key] = std::stod(value);
    }
  }
  return fields;
}

// Parameters equal a reference's within `rel` relative to the largest of the reference.
void expectClose(const std::vector<float>& got, const std::vector<float>& want, double rel,
                 const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  ASSERT_FALSE(want.empty()) << what;
  double scale = 0, worst = 0;
  for (float w : want)
    scale = std::max(scale, static_cast<double>(std::fabs(w)));
  for (size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::fabs(static_cast<double>(got[i]) - want[i]));
  EXPECT_LE(worst, rel * scale) << what << ": largest difference " << worst << " against " << scale;
}

// A 20-step run's final parameters, as weft-train dumps them.
std::vector<float> parametersAfter(int ranks, const std::string& precision, int zero,
                                   const std::string& what,
                                   const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = kSmall;
  const std::string path = tempPath("params");
  // fp16's loss scale is one that overflows no sum of 4 ranks' gradients, so that the runs skip
  // the same steps (none): the dynamic scaling has a test of its own.
  args.insert(args.end(), {"--steps", "20", "--quiet", "--precision", precision, "--zero",
                           std::to_string(zero), "--loss-scale", "1024", "--dump", path});
  args.insert(args.end(), extra.begin(), extra.end());
  ProcessResult r = train(ranks, args);
  EXPECT_EQ(r.exitCode(), 0) << what << "\n" << r.out << r.err;
  EXPECT_EQ(r.out.find("skipped"), std::string::npos) << what << "\n" << r.out;
  std::vector<float> out = readFloats(path);
  std::remove(path.c_str());
  return out;
}

// fp32: every mode at 1-4 ranks within 1e-5 of one rank's plain data parallelism.
TEST(WeftTrain, Fp32EveryModeAtOneToFourRanksMatchesOneRank) {
  const std::vector<float> fp32 = parametersAfter(1, "fp32", 0, "reference");
  ASSERT_GT(fp32.size(), 1000u);
  for (int zero = 0; zero <= 3; ++zero) {
    for (int ranks = 1; ranks <= 4; ++ranks) {
      if (zero == 0 && ranks == 1) continue;
      const std::string what =
          "fp32, zero " + std::to_string(zero) + ", " + std::to_string(ranks) + " ranks";
      expectClose(parametersAfter(ranks, "fp32", zero, what), fp32, 1e-5, what);
    }
  }
}

// bf16 and fp16 (float32 master weights): every mode at 2 and 4 ranks within a few units in the
// last place of the type (at 1.0: bf16 2^-7, fp16 2^-10) of one rank of the same type and of the
// fp32 run. A layer that updated 16-bit weights without master weights would lose most updates
// (lr 3e-3) and miss the fp32 run by far more.
TEST(WeftTrain, Bf16AndFp16EveryModeMatchOneRankWithinTheirPrecision) {
  const std::vector<float> fp32 = parametersAfter(1, "fp32", 0, "reference");
  const struct {
    const char* name;
    double tolerance;
  } precisions[] = {{"bf16", 0.02}, {"fp16", 0.015}};
  for (const auto& p : precisions) {
    const std::string name = p.name;
    const std::vector<float> one = parametersAfter(1, name, 0, name);
    expectClose(one, fp32, p.tolerance, name + " against fp32");
    for (int zero = 0; zero <= 3; ++zero) {
      for (int ranks : {2, 4}) {
        const std::string what =
            name + ", zero " + std::to_string(zero) + ", " + std::to_string(ranks) + " ranks";
        const std::vector<float> got = parametersAfter(ranks, name, zero, what);
        expectClose(got, one, p.tolerance, what);
        expectClose(got, fp32, p.tolerance, what + " against fp32");
      }
    }
  }
}

// Offloading the optimizer moves where its state lives and which thread updates, not the
// arithmetic; parameter servers, one or several (small buckets, so that each serves some),
// update what the others reduce to them: the same parameters as one rank's run.
TEST(WeftTrain, OffloadAndParameterServersMatchOneRank) {
  const std::vector<float> fp32 = parametersAfter(1, "fp32", 0, "reference");
  for (int zero = 1; zero <= 3; ++zero) {
    for (int ranks : {1, 3}) {
      const std::string what =
          "offload, zero " + std::to_string(zero) + ", " + std::to_string(ranks) + " ranks";
      expectClose(parametersAfter(ranks, "fp32", zero, what, {"--offload"}), fp32, 1e-5, what);
    }
  }
  for (int ranks : {2, 4}) {
    for (int servers : {1, 2}) {
      const std::string what =
          std::to_string(servers) + " parameter servers, " + std::to_string(ranks) + " ranks";
      expectClose(
          parametersAfter(ranks, "fp32", 0, what,
                          {"--param-server", std::to_string(servers), "--bucket-bytes", "4096"}),
          fp32, 1e-5, what);
    }
  }
}

// Memory per rank by kind and bytes sent per step, with rings over tcp, against ZeRO's
// formulas. fp32 Adam: 4 bytes a parameter, 4 a gradient, 8 of moments. Mixed precision (bf16),
// the paper's K = 12: 2 + 2 + 12 (master weights and moments), so DP 16 Psi, ZeRO-1 4 Psi +
// 12 Psi/N, ZeRO-2 2 Psi + 14 Psi/N, ZeRO-3 16 Psi/N. Traffic: DP and ZeRO-1/2 move 2 Psi (N-1)/N
// elements, ZeRO-3 3 Psi (N-1)/N, plus bf16's overflow check (one all-reduce of 16 bytes). A
// model of many units, each several buckets, so that what ZeRO-2 and 3 hold besides their
// shards (bucket buffers, gathered units) is a small part of the whole.
TEST(WeftTrain, MemoryAndTrafficFollowZerosFormulas) {
  const int n = 4, d = 8 * 16, hidden = 128;
  // The largest unit, a block: LayerNorm gain and bias, W1, b1, W2, b2.
  const double blockElements = 2 * d + d * hidden + hidden + hidden * d + d;
  for (const std::string precision : {"fp32", "bf16"}) {
    const double elem = precision == "fp32" ? 4 : 2;    // bytes of a parameter or gradient
    const double state = precision == "fp32" ? 8 : 12;  // bytes of optimizer state
    // Mode 4 is ZeRO-3 with the optimizer offloaded: its state (and float32 master weights, for
    // either precision) in the host pool instead, 12 Psi / N.
    for (int mode = 0; mode <= 4; ++mode) {
      const int zero = std::min(mode, 3);
      const bool offload = mode == 4;
      std::vector<std::string> args = {"--steps",        "2",
                                       "--bucket-bytes", "32768",
                                       "--context",      "8",
                                       "--embed",        "16",
                                       "--hidden",       std::to_string(hidden),
                                       "--blocks",       "8",
                                       "--precision",    precision,
                                       "--zero",         std::to_string(zero)};
      if (offload) args.push_back("--offload");
      ProcessResult r = train(n, args, {"WEFT_TRANSPORT=tcp", "WEFT_ALGO=ring"});
      ASSERT_EQ(r.exitCode(), 0) << r.out << r.err;
      const std::string& out = r.out;
      // Psi: the model's parameters, from the trainer's own count in its first line.
      const size_t at = out.find(" parameters");
      ASSERT_NE(at, std::string::npos) << out;
      const double psi = std::stod(out.substr(out.rfind(' ', at - 1) + 1));
      std::map<std::string, double> s = lastStep(out);
      const std::string what =
          precision + ", zero " + std::to_string(zero) + (offload ? ", offload\n" : "\n") + out;
      const double sent = (zero == 3 ? 3 : 2) * elem * psi * (n - 1) / n;
      const double check = precision == "fp32" ? 0 : 2 * 16.0 * (n - 1) / n;
      EXPECT_NEAR(s["sent"], sent + check, 0.05 * sent) << what;
      EXPECT_NEAR(s["received"], sent + check, 0.05 * sent) << what;
      const double params = zero == 3 ? elem * psi / n : elem * psi;
      const double grads = zero >= 2 ? elem * psi / n : elem * psi;
      const double optim = zero >= 1 ? state * psi / n : state * psi;
      EXPECT_NEAR(s["params"], params, 0.05 * params) << what;
      EXPECT_NEAR(s["grads"], grads, 0.05 * grads) << what;
      if (offload) {
        EXPECT_EQ(s["optim"], 0) << what;
        EXPECT_NEAR(s["offloaded"], 12 * psi / n, 0.05 * 12 * psi / n) << what;
      } else {
        EXPECT_NEAR(s["optim"], optim, 0.05 * optim) << what;
        EXPECT_EQ(s["offloaded"], 0) << what;
      }
      if (zero >= 2) {
        // Bucket buffers: those of a unit's backward, open at once; far less than a full copy.
        EXPECT_GT(s["buckets"], 0) << what;
        EXPECT_LT(s["buckets"], 0.5 * elem * psi) << what;
      } else {
        EXPECT_EQ(s["buckets"], 0) << what;
      }
      if (zero == 3) {
        EXPECT_GT(s["gathered"], 0) << what;
        // The unit in use and the one prefetched.
        EXPECT_LE(s["gathered"], 2 * elem * blockElements) << what;
      } else {
        EXPECT_EQ(s["gathered"], 0) << what;
      }
    }
  }
}

// Parameter servers keep the optimizer state: one server all of it (8 Psi bytes, fp32 Adam), at 4
// servers of 4 ranks rank 0 a quarter of the buckets; every rank holds all parameters and
// gradients.
TEST(WeftTrain, ParameterServersHoldTheOptimizerState) {
  for (int servers : {1, 4}) {
    std::vector<std::string> args = kSmall;
    args.insert(args.end(), {"--steps", "2", "--param-server", std::to_string(servers),
                             "--bucket-bytes", "2048"});
    ProcessResult r = train(4, args);
    ASSERT_EQ(r.exitCode(), 0) << r.out << r.err;
    const size_t at = r.out.find(" parameters");
    ASSERT_NE(at, std::string::npos) << r.out;
    const double psi = std::stod(r.out.substr(r.out.rfind(' ', at - 1) + 1));
    std::map<std::string, double> s = lastStep(r.out);
    EXPECT_EQ(s["params"], 4 * psi) << r.out;
    EXPECT_EQ(s["grads"], 4 * psi) << r.out;
    if (servers == 1) {
      EXPECT_EQ(s["optim"], 8 * psi) << r.out;
    } else {
      EXPECT_GT(s["optim"], 0) << r.out;
      EXPECT_LT(s["optim"], 0.5 * 8 * psi) << r.out;
    }
  }
  ProcessResult r = train(2, {"--param-server", "3", "--steps", "1"});
  EXPECT_NE(r.exitCode(), 0);
  EXPECT_NE(r.err.find("3 servers: there are 2 ranks"), std::string::npos) << r.out << r.err;
  r = train(2, {"--param-server", "1", "--zero", "2", "--steps", "1"});
  EXPECT_NE(r.exitCode(), 0);
  EXPECT_NE(r.err.find("runs float32 data parallelism"), std::string::npos) << r.out << r.err;
  r = train(2, {"--offload", "--zero", "3,0", "--steps", "1"});
  EXPECT_NE(r.exitCode(), 0);
  EXPECT_NE(r.err.find("needs --zero 1, 2 or 3"), std::string::npos) << r.out << r.err;
}

// fp16's loss scaling: a scale so large that the first steps' gradients overflow on every
// rank; those steps are skipped, each halving the scale, and training then goes on.
TEST(WeftTrain, Fp16SkipsOverflowingStepsAndHalvesTheScale) {
  std::vector<std::string> args = kSmall;
  args.insert(args.end(), {"--steps", "40", "--precision", "fp16", "--zero", "2", "--loss-scale",
                           "16777216", "--clip", "1"});
  ProcessResult r = train(2, args);
  ASSERT_EQ(r.exitCode(), 0) << r.out << r.err;
  EXPECT_NE(r.out.find("step 1 loss"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("skipped: loss scale now 8388608"), std::string::npos) << r.out;
  size_t skipped = 0;
  for (const std::string& line : splitLines(r.out))
    skipped += line.find("skipped") != std::string::npos;
  EXPECT_GE(skipped, 2u) << r.out;
  EXPECT_LT(skipped, 20u) << r.out;
  const double first = std::stod(r.out.substr(r.out.find("step 1 loss ") + 12));
  EXPECT_LT(lastStep(r.out)["loss"], first - 0.3) << r.out;
}

// The README's command: the default model learns the GPL-3's text well below its unigram
// entropy in 200 steps at 4 ranks under ZeRO-3.
TEST(WeftTrain, LearnsTheTextUnderZero3) {
  ProcessResult r = train(4, {"--zero", "3", "--steps", "200", "--quiet"});
  ASSERT_EQ(r.exitCode(), 0) << r.out << r.err;
  const size_t at = r.out.find("unigram entropy ");
  ASSERT_NE(at, std::string::npos) << r.out;
  const double entropy = std::stod(r.out.substr(at + 16));
  const double loss = lastStep(r.out)["loss"];
  EXPECT_LT(loss, entropy - 0.8) << r.out;
}

// Several modes in one run, one after another, and their loss curves drawn by gnuplot.
TEST(WeftTrain, RunsSeveralModesAndPlotsTheirLoss) {
  if (access("/usr/bin/gnuplot", X_OK) != 0) {
    GTEST_SKIP() << "gnuplot is not installed (scripts/install-deps.sh installs gnuplot-nox)";
  }
  const std::string png = tempPath("loss.png");
  std::vector<std::string> args = kSmall;
  args.insert(args.end(), {"--steps", "5", "--quiet", "--zero", "0,2", "--precision", "fp32,bf16",
                           "--plot", png});
  ProcessResult r = train(2, args);
  ASSERT_EQ(r.exitCode(), 0) << r.out << r.err;
  size_t modes = 0;
  for (const std::string& line : splitLines(r.out))
    modes += line.find("weft-train: ") != std::string::npos;
  EXPECT_EQ(modes, 4u) << r.out;
  EXPECT_NE(r.out.find("ZeRO-2, 2 ranks, bf16"), std::string::npos) << r.out;
  std::ifstream f(png, std::ios::binary);
  char magic[8] = {};
  f.read(magic, sizeof(magic));
  EXPECT_EQ(std::string(magic, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  std::remove(png.c_str());
}

TEST(WeftTrain, BadInputGivesClearErrors) {
  ProcessResult r = train(1, {"--text", "/nonexistent/text", "--steps", "1"});
  EXPECT_NE(r.exitCode(), 0);
  EXPECT_NE(r.err.find("/nonexistent/text"), std::string::npos) << r.out << r.err;
  r = train(1, {"--zero", "4"});
  EXPECT_NE(r.exitCode(), 0);
  EXPECT_NE((r.out + r.err).find("--zero"), std::string::npos) << r.out << r.err;
  r = train(3, {"--batch", "2", "--steps", "1"});
  EXPECT_NE(r.exitCode(), 0);
  EXPECT_NE(r.err.find("smaller than the 3 ranks"), std::string::npos) << r.out << r.err;
  r = train(1, {"--precision", "fp8"});
  EXPECT_NE(r.exitCode(), 0);
  EXPECT_NE((r.out + r.err).find("--precision"), std::string::npos) << r.out << r.err;
  r = train(1, {"--zero", "0,1", "--dump", tempPath("two")});
  EXPECT_NE(r.exitCode(), 0);
  EXPECT_NE((r.out + r.err).find("one mode"), std::string::npos) << r.out << r.err;
  r = train(2, {"--bucket-bytes", "0"});
  EXPECT_NE(r.exitCode(), 0);
  EXPECT_NE((r.out + r.err).find("--bucket-bytes"), std::string::npos) << r.out << r.err;
}

}  // namespace
}  // namespace weft::test
