#include "topology/bandwidth.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "topology/system.h"

namespace weft::topo {

double pcieRateGts(std::string_view linkSpeed) {
  std::string text(linkSpeed);
  const char* p = text.c_str();
  while (*p == ' ')
    ++p;
  char* end = nullptr;
  double v = strtod(p, &end);
  if (end == p || !(v > 0) || v > 1000) return 0;
  return v;
}

int pcieGeneration(double rateGts) {
  static const double kRates[] = {2.5, 5, 8, 16, 32, 64};
  for (int g = 0; g < 6; ++g) {
    if (std::fabs(rateGts - kRates[g]) < 0.3) return g + 1;
  }
  return 0;
}

double pcieBw(double rateGts, int width) {
  // NCCL: per lane 100 Mb/s units 15, 30, 60, 120, 240, 480 for Gen1..6; bw = width * v / 80.
  // Gen1/2 use 8b/10b coding (0.8 of the rate is data), later generations 128b/130b, and
  // NCCL counts 75% of the data rate: Gen3 x16 = 8 GT/s * 16 / 8 * 0.75 = 12 GB/s.
  if (width <= 0) width = 16;
  double perLane;  // in NCCL's units of 100 Mb/s
  int gen = pcieGeneration(rateGts);
  if (gen == 0) {
    perLane = 60;  // NCCL's fallback: Gen3
  } else {
    static const double kPerLane[] = {15, 30, 60, 120, 240, 480};
    perLane = kPerLane[gen - 1];
  }
  return width * perLane / 80.0;
}

double pcieBwFromHwloc(double hwlocGBs) {
  if (!(hwlocGBs > 0)) return kDefaultPcieBw;
  return hwlocGBs * (12.0 / 15.753846);
}

bool pcieLinkFromHwloc(double hwlocGBs, double* rateGts, int* width) {
  if (!(hwlocGBs > 0) || hwlocGBs > 10000) return false;
  static const double kRates[] = {2.5, 5, 8, 16, 32};
  static const int kWidths[] = {1, 2, 4, 8, 16};
  // Gen3 x16, Gen4 x8 and Gen5 x4 carry the same; the widest is the usual slot, so widths are
  // tried widest first and a later match must be strictly nearer.
  double best = 1e300;
  for (int wi = 4; wi >= 0; --wi) {
    for (int g = 0; g < 5; ++g) {
      double coding = g < 2 ? 0.8 : 128.0 / 130.0;
      double raw = kRates[g] * kWidths[wi] * coding / 8;
      double err = std::fabs(raw - hwlocGBs) / hwlocGBs;
      if (err < best - 1e-6) {
        best = err;
        *rateGts = kRates[g];
        *width = kWidths[wi];
      }
    }
  }
  return true;
}

int nvlinkGeneration(int sm) {
  if (sm >= 100) return 5;
  if (sm >= 90) return 4;
  if (sm >= 80) return 3;
  if (sm >= 70) return 2;
  if (sm >= 60) return 1;
  return 0;
}

double nvlinkBwPerLink(int sm) {
  if (sm >= 100) return 40.1;
  if (sm >= 90) return 20.6;
  if (sm == 86) return 12.0;
  if (sm >= 80) return 20.0;
  if (sm >= 70) return 20.0;
  if (sm >= 60) return 18.0;
  return kDefaultNvlinkBw;
}

double nvlinkRawRate(int generation) {
  switch (generation) {
    case 1:
      return 20.0;
    case 2:
    case 3:
    case 4:
      return 25.0;
    case 5:
      return 50.0;
    default:
      return 20.0;
  }
}

double interCpuBw(const CpuInfo& cpu) {
  const std::string& arch = cpu.arch;
  if (arch.rfind("ppc", 0) == 0 || arch == "power") return 32.0;  // POWER9 X-Bus (NCCL P9_BW)
  if (arch == "arm64" || arch == "aarch64") return 6.0;
  if (arch == "x86_64") {
    if (cpu.vendor == "GenuineIntel") {
      int f = cpu.familyId, m = cpu.modelId;
      if (f == 6 && (m >= 0xCF || m == 0xAD || m == 0xAE || m == 0xAF)) return 40.0;  // ERP
      if (f == 6 && m >= 0x8F) return 22.0;                                           // SPR
      if (f == 6 && m >= 0x55) return 10.0;                                           // SKL
      return 6.0;                                                                     // BDW
    }
    if (cpu.vendor == "AuthenticAMD") {
      // CPUID family, or the encoding of older NCCL dumps (0xBF, 0xAF, 0x8F).
      if (cpu.familyId == 26 || cpu.familyId == 0xBF) return 32.0;  // Zen 5
      if (cpu.familyId == 25 || cpu.familyId == 0xAF) return 24.0;  // Zen 3/4
      return 16.0;                                                  // Zen 1/2
    }
    if (cpu.vendor == "CentaurHauls" || cpu.vendor == "  Shanghai  ") return 6.0;
  }
  return kDefaultInterCpuBw;
}

std::string interCpuName(const CpuInfo& cpu) {
  if (cpu.arch.rfind("ppc", 0) == 0) return "X-Bus";
  if (cpu.vendor == "GenuineIntel") return cpu.familyId == 6 && cpu.modelId >= 0x55 ? "UPI" : "QPI";
  if (cpu.vendor == "AuthenticAMD") return "Infinity Fabric";
  return "CPU interconnect";
}

std::string formatBandwidth(double gbs) {
  if (gbs >= kLocalBw) return "local";
  char buf[32];
  snprintf(buf, sizeof(buf), gbs < 10 ? "%.2f GB/s" : "%.1f GB/s", gbs);
  return buf;
}

double netBw(int mbps) {
  if (mbps <= 0) mbps = kDefaultNetMbps;
  return mbps / 8000.0;
}

}  // namespace weft::topo
