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

TEST(WeftTrain, EveryModeAtOneToFourRanksMatchesOneRank) {
  std::vector<std::string> args = kSmall;
  args.insert(args.end(), {"--steps", "20", "--quiet"});
  const std::string refPath = tempPath("ref");
  auto refArgs = args;
  refArgs.insert(refArgs.end(), {"--zero", "0", "--dump", refPath});
  ProcessResult ref = train(1, refArgs);
  ASSERT_EQ(ref.exitCode(), 0) << ref.out << ref.err;
  const std::vector<float> want = readFloats(refPath);
  ASSERT_GT(want.size(), 1000u);
  for (int zero = 0; zero <= 3; ++zero) {
    for (int ranks = 1; ranks <= 4; ++ranks) {
      if (zero == 0 && ranks == 1) continue;
      const std::string what =
          "zero " + std::to_string(zero) + ", " + std::to_string(ranks) + " ranks";
      const std::string path = tempPath("z" + std::to_string(zero) + "r" + std::to_string(ranks));
      auto a = args;
      a.insert(a.end(), {"--zero", std::to_string(zero), "--dump", path});
      ProcessResult r = train(ranks, a);
      ASSERT_EQ(r.exitCode(), 0) << what << "\n" << r.out << r.err;
      expectClose(readFloats(path), want, 1e-5, what);
      std::remove(path.c_str());
    }
  }
  std::remove(refPath.c_str());
}

// Memory per rank by kind (fp32: 4 bytes a parameter, Adam's two moments 8) and bytes sent per
// step, with rings over tcp: data parallelism and ZeRO-1/2 move 2 Psi (N-1)/N elements, ZeRO-3
// 3 Psi (N-1)/N. A model of many units, each several buckets, so that what ZeRO-2 and 3 hold
// besides their shards (bucket buffers, gathered units) is a small part of the whole.
TEST(WeftTrain, MemoryAndTrafficFollowZerosFormulas) {
  const int n = 4, d = 8 * 16, hidden = 128;
  std::vector<std::string> args = {
      "--steps", "2",        "--bucket-bytes",       "32768",    "--context", "8", "--embed",
      "16",      "--hidden", std::to_string(hidden), "--blocks", "8"};
  // The largest unit, a block: LayerNorm gain and bias, W1, b1, W2, b2.
  const double block = 4.0 * (2 * d + d * hidden + hidden + hidden * d + d);
  // Psi: the model's parameters, from the trainer's own count in its first line.
  for (int zero = 0; zero <= 3; ++zero) {
    auto a = args;
    a.insert(a.end(), {"--zero", std::to_string(zero)});
    ProcessResult r = train(n, a, {"WEFT_TRANSPORT=tcp", "WEFT_ALGO=ring"});
    ASSERT_EQ(r.exitCode(), 0) << r.out << r.err;
    const std::string& out = r.out;
    const size_t at = out.find(" parameters");
    ASSERT_NE(at, std::string::npos) << out;
    const double psi = std::stod(out.substr(out.rfind(' ', at - 1) + 1));
    std::map<std::string, double> s;
    // The memory fields follow "mem" as name/value pairs; lastStep reads them as keys too.
    s = lastStep(out);
    const std::string what = "zero " + std::to_string(zero) + "\n" + out;
    const double full = 4 * psi, shard = 4 * psi / n;
    const double sent = (zero == 3 ? 3 : 2) * 4 * psi * (n - 1) / n;
    EXPECT_NEAR(s["sent"], sent, 0.05 * sent) << what;
    EXPECT_NEAR(s["received"], sent, 0.05 * sent) << what;
    EXPECT_NEAR(s["params"], zero == 3 ? shard : full, 0.05 * shard) << what;
    EXPECT_NEAR(s["grads"], zero >= 2 ? shard : full, 0.05 * shard) << what;
    EXPECT_NEAR(s["optim"], zero >= 1 ? 2 * shard : 2 * full, 0.05 * shard) << what;
    if (zero >= 2) {
      // Bucket buffers: those of a unit's backward, open at once; far less than a full copy.
      EXPECT_GT(s["buckets"], 0) << what;
      EXPECT_LT(s["buckets"], 0.5 * full) << what;
    } else {
      EXPECT_EQ(s["buckets"], 0) << what;
    }
    if (zero == 3) {
      EXPECT_GT(s["gathered"], 0) << what;
      EXPECT_LE(s["gathered"], 2 * block) << what;  // the unit in use and the one prefetched
    } else {
      EXPECT_EQ(s["gathered"], 0) << what;
    }
  }
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
  r = train(2, {"--bucket-bytes", "0"});
  EXPECT_NE(r.exitCode(), 0);
  EXPECT_NE((r.out + r.err).find("--bucket-bytes"), std::string::npos) << r.out << r.err;
}

}  // namespace
}  // namespace weft::test
