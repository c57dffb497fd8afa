// Bandwidths of links, in GB/s per direction. The numbers follow NCCL's model (src/graph/topo.h):
// what one direction of a link sustains for collective traffic, not the raw signalling rate.
#pragma once

#include <string>
#include <string_view>

namespace weft::topo {

struct CpuInfo;

// Inside one device or a link with no practical limit (NCCL's LOC_BW).
constexpr double kLocalBw = 5000.0;
// PCIe Gen3 x16, NCCL's default when a file gives no speed or width.
constexpr double kDefaultPcieBw = 12.0;
// NCCL's default NIC speed when none is known: 10 Gb/s.
constexpr int kDefaultNetMbps = 10000;
// Per NVLink when the GPU generation is unknown (NCCL's SM80 value).
constexpr double kDefaultNvlinkBw = 20.0;
// Between NUMA nodes when the CPU is not recognised.
constexpr double kDefaultInterCpuBw = 10.0;

// The transfer rate of a PCIe link in GT/s from sysfs/NCCL text ("16 GT/s", "8.0 GT/s PCIe",
// "32 GT/s PCIe/s"); 0 when unknown.
double pcieRateGts(std::string_view linkSpeed);
// The PCIe generation of a rate (2.5 -> 1 ... 64 -> 6); 0 when unknown.
int pcieGeneration(double rateGts);
// Effective bandwidth of a PCIe link: Gen3 x16 = 12 GB/s, scaling with rate and width as NCCL.
double pcieBw(double rateGts, int width);
// The bandwidth of a hwloc link (hwloc gives GB/s after encoding; Gen3 x16 = 15.75) in the same
// effective units as pcieBw.
double pcieBwFromHwloc(double hwlocGBs);

// The standard PCIe link (rate in GT/s, width) whose raw bandwidth is nearest to what hwloc
// reports (GB/s after encoding, e.g. 15.75 for Gen3 x16). False when `hwlocGBs` is not positive.
bool pcieLinkFromHwloc(double hwlocGBs, double* rateGts, int* width);

// NVLink generation of a GPU of compute capability `sm` (60 -> 1 ... 100 -> 5); 0 when unknown.
int nvlinkGeneration(int sm);
// Effective bandwidth of one NVLink of a GPU of compute capability `sm` (NCCL's table).
double nvlinkBwPerLink(int sm);
// The raw rate of one NVLink of a generation, as NVML and hwloc report it (20, 25, 25, 25, 50).
double nvlinkRawRate(int generation);

// Bandwidth between two NUMA nodes of this CPU (NCCL's table by architecture and model).
double interCpuBw(const CpuInfo& cpu);
// A short name of the interconnect for explanations ("UPI", "Infinity Fabric", ...).
std::string interCpuName(const CpuInfo& cpu);

// "240.0 GB/s", "1.25 GB/s" (two decimals under 10), "local" from kLocalBw up.
std::string formatBandwidth(double gbs);

// Network bandwidth of a port of `mbps` Mb/s (NCCL: mbps / 8000).
double netBw(int mbps);

}  // namespace weft::topo
