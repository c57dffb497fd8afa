// Communicators measure their links at init for the cost model (WEFT_CALIBRATE): the figures
// must be plausible for the transport, the same on every rank, and absent when turned off.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/api/process_ranks.h"
#include "weft/weft.h"

namespace weft::test {
namespace {

struct Measured {
  bool found = false;
  double latencyUs = 0;
  double bandwidthGBps = 0;
};

// Reads rank r's log and removes it.
Measured measuredIn(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  Measured m;
  while (std::getline(in, line)) {
    size_t at = line.find("measured links: ");
    if (at != std::string::npos &&
        sscanf(line.c_str() + at, "measured links: %lf us latency, %lf GB/s", &m.latencyUs,
               &m.bandwidthGBps) == 2) {
      m.found = true;
    }
  }
  unlink(path.c_str());
  return m;
}

std::vector<Measured> runRanks(const char* transport, const char* calibrate) {
  const std::string log = "/tmp/weft-calibration-test." + std::to_string(getpid());
  auto results = runProcesses(
      2,
      {{"WEFT_DEBUG", "INFO"},
       {"WEFT_DEBUG_SUBSYS", "INIT"},
       {"WEFT_TRANSPORT", transport},
       {"WEFT_CALIBRATE", calibrate}},
      [&](int rank) {
        setenv("WEFT_DEBUG_FILE", (log + "." + std::to_string(rank)).c_str(), 1);
        weftComm_t comm = nullptr;
        ASSERT_EQ(weftCommInitFromEnv(&comm), weftSuccess) << weftGetLastError(nullptr);
        EXPECT_EQ(weftCommDestroy(comm), weftSuccess);
      });
  expectAllOk(results);
  return {measuredIn(log + ".0"), measuredIn(log + ".1")};
}

class Calibration : public ::testing::TestWithParam<const char*> {};

// Generous bounds, for a loaded machine: what they catch is a measurement of the wrong thing
// (waits that sleep, first-touch faults), which is off by orders of magnitude.
TEST_P(Calibration, MeasuresPlausibleLinksAlikeOnEveryRank) {
  auto m = runRanks(GetParam(), "1");
  ASSERT_TRUE(m[0].found && m[1].found) << "no 'measured links' line";
  EXPECT_GT(m[0].latencyUs, 0.0);
  EXPECT_LT(m[0].latencyUs, 2000.0);
  EXPECT_GT(m[0].bandwidthGBps, 1.0);
  EXPECT_LT(m[0].bandwidthGBps, 1000.0);
  EXPECT_EQ(m[0].latencyUs, m[1].latencyUs);
  EXPECT_EQ(m[0].bandwidthGBps, m[1].bandwidthGBps);
}

TEST_P(Calibration, OffMeansNoMeasurement) {
  auto m = runRanks(GetParam(), "0");
  EXPECT_FALSE(m[0].found || m[1].found);
}

INSTANTIATE_TEST_SUITE_P(Transports, Calibration, ::testing::Values("shm", "tcp"));

}  // namespace
}  // namespace weft::test
