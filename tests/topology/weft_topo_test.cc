// weft-topo as users run it: output, formats and exit codes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "tests/topology/test_util.h"
#include "tests/topology/weft_topo_runner.h"
#include "tools/weft_topo/options.h"
#include "tools/weft_topo/run.h"
#include "tools/weft_topo/wrap.h"
#include "topology/hwloc_xml_reader.h"
#include "topology/sysfs.h"

namespace weft::topo {
namespace {

using test::Result;
using test::weftTopo;

std::string data(const std::string& name) {
  return test::dataPath(name);
}

TEST(WeftTopo, DescribesThisMachine) {
  Result r = weftTopo("");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("this machine"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("CPUs:"), std::string::npos);
  EXPECT_NE(r.out.find("NUMA 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NICs:"), std::string::npos);
  // Each interface with a PCI device is named.
  for (const SysfsNet& n : Sysfs().netInterfaces()) {
    if (!n.busId.empty()) {
      EXPECT_NE(r.out.find(n.name), std::string::npos) << n.name << r.out;
    }
  }
}

TEST(WeftTopo, MatrixAndRingsForAFile) {
  Result r = weftTopo("--topo " + data("nvidia-dgx1-v100-4xedr.nvsmi.txt") + " --matrix --rings 8");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(
      r.out.find("GPU0\t X \tNV1\tNV1\tNV2\tNV2\tSYS\tSYS\tSYS\tPIX\tSYS\tPHB\tSYS\t0-19,40-59"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Rings: 8 GPU rank(s)"), std::string::npos);
  EXPECT_NE(r.out.find("ring 0: GPU0 -> "), std::string::npos);
  EXPECT_NE(r.out.find("why: follows NVLink edges only"), std::string::npos);
}

TEST(WeftTopo, EveryFileGivesMatrixAndRings) {
  // Run from the data folder, so the file name the first line echoes is the same wherever the
  // tree is checked out, and the width check below is one of weft-topo's own text.
  const std::string inData = "cd '" + std::string(WEFT_TOPO_DATA_DIR) + "' &&";
  for (const std::string& f : test::dataFiles()) {
    Result r = weftTopo("--topo " + f + " --matrix --rings 8 --trees --hosts 2", inData);
    // Two hosts need a NIC; files without one say so (exit 1), the rest succeed.
    if (r.code == 1) {
      EXPECT_NE(r.out.find("need a NIC"), std::string::npos) << f << r.out;
      r = weftTopo("--topo " + f + " --matrix --rings 8 --trees", inData);
    }
    if (r.out.find("no hwloc support") != std::string::npos) continue;
    EXPECT_EQ(r.code, 0) << f << "\n" << r.out;
    EXPECT_NE(r.out.find("Rings:"), std::string::npos) << f;
    EXPECT_NE(r.out.find("Trees:"), std::string::npos) << f;
    // Text lines fit a terminal; only the tab-separated matrix may be wider.
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      if (line.find('\t') == std::string::npos) {
        EXPECT_LE(line.size(), topotool::kTextWidth) << f << ": " << line;
      }
    }
  }
}

// Files that name no GPU: the matrix shows what they do contain, after a line saying why.
TEST(WeftTopo, MatrixWithoutGpus) {
  Result g5 = weftTopo("--topo " + data("aws-g5.48xlarge-a10gx8-pcie.nccl.xml") + " --matrix");
  ASSERT_EQ(g5.code, 0) << g5.out;
  EXPECT_NE(g5.out.find("\nNo GPU or NIC in this file: its 9 PCI endpoint(s) have no class"),
            std::string::npos)
      << g5.out;
  EXPECT_NE(g5.out.find("\tDEV0\tDEV1\t"), std::string::npos) << g5.out;
  EXPECT_NE(g5.out.find("DEV8: 0000:00:15.0"), std::string::npos) << g5.out;
  Result p5 = weftTopo("--topo " + data("aws-p5.48xlarge-h100x8-efa32.nccl.xml") + " --matrix");
  ASSERT_EQ(p5.code, 0) << p5.out;
  EXPECT_NE(p5.out.find("DEV0\t X \tPIX\tPIX\tPIX\tPHB"), std::string::npos) << p5.out;
  test::TempDir dir;
  std::string bare = dir.file("bare.xml", "<system version=\"1\"><cpu numaid=\"0\"/></system>");
  Result none = weftTopo("--topo " + bare + " --matrix");
  ASSERT_EQ(none.code, 0) << none.out;
  EXPECT_NE(none.out.find("No GPU, NIC or PCI device in this file (1 NUMA node(s) only): no "
                          "table.\n"),
            std::string::npos)
      << none.out;
  EXPECT_EQ(none.out.find("CPU Affinity"), std::string::npos) << none.out;
  EXPECT_EQ(none.out.find("Legend"), std::string::npos) << none.out;
}

// Without --topo the matrix is of this machine, and its note says so rather than "file".
TEST(WeftTopo, MatrixOfThisMachineSpeaksOfIt) {
  Result r = weftTopo("--matrix", "env -u WEFT_TOPO_FILE");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("this file"), std::string::npos) << r.out;
  if (access("/proc/driver/nvidia/gpus", F_OK) != 0) {  // no NVIDIA driver: no GPU to find
    EXPECT_NE(r.out.find(" on this machine"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\nNo GPU "), std::string::npos) << r.out;
  }
}

// ndv4's columns GPU0 and NIC0 are numbered by Weft; the legend under the table gives their bus
// ids (GPU0 is 0001:00:00.0, the lowest; NIC0 is 0103:00:00.0, the file's first NIC).
TEST(WeftTopo, MatrixLegendGivesBusIds) {
  Result r = weftTopo("--topo " + data("azure-ndv4-a100x8-hdr200x8.nccl.xml") + " --matrix");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("\nDevice Legend:\n  GPU0: 0001:00:00.0\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n  NIC0: 0103:00:00.0\n"), std::string::npos) << r.out;
}

// NCCL joins every pair of NUMA nodes; the text lists each pair the file's <cpu> elements make.
TEST(WeftTopo, DescribesEveryLinkBetweenNumaNodes) {
  std::string file = data("azure-ndv4-a100x8-hdr200x8.nccl.xml");
  std::string xml = test::readFile(file);
  std::vector<std::string> numa;
  std::regex cpu("<cpu numaid=\"(\\d+)\"");
  for (auto it = std::sregex_iterator(xml.begin(), xml.end(), cpu); it != std::sregex_iterator();
       ++it)
    numa.push_back((*it)[1]);
  ASSERT_EQ(numa.size(), 4u) << "ndv4 has four NUMA nodes";
  Result r = weftTopo("--topo " + file);
  ASSERT_EQ(r.code, 0) << r.out;
  int pairs = 0;
  for (size_t i = 0; i < numa.size(); ++i) {
    for (size_t j = i + 1; j < numa.size(); ++j, ++pairs)
      EXPECT_NE(r.out.find("CPU" + numa[i] + " <-> CPU" + numa[j]), std::string::npos) << r.out;
  }
  EXPECT_EQ(pairs, 6);
}

TEST(WeftTopo, MoreRanksThanGpusSaysSo) {
  Result r = weftTopo("--topo " + data("azure-ncv4-a100x4-pcie.nccl.xml") + " --rings 8");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("Rings: 4 GPU rank(s): GPU0..GPU3 (8 ranks per host asked for"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("--device cpu plans 8 CPU ranks instead"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ring 0: GPU0 -> "), std::string::npos) << r.out;
  Result cpu =
      weftTopo("--topo " + data("azure-ncv4-a100x4-pcie.nccl.xml") + " --rings 8 --device cpu");
  ASSERT_EQ(cpu.code, 0) << cpu.out;
  EXPECT_NE(cpu.out.find("Rings: 8 CPU rank(s)"), std::string::npos) << cpu.out;
  EXPECT_EQ(cpu.out.find("--device cpu plans"), std::string::npos) << cpu.out;
}

// Rings that visit the same ranks in the same order say why there are two of them, in the text
// and in the JSON.
TEST(WeftTopo, RepeatedRingsSayWhy) {
  for (const std::string& args :
       {"--topo " + data("azure-ncv4-a100x4-pcie.nccl.xml") + " --rings 4 --device cpu",
        "--topo " + data("alibaba-hgx-a100x8-cx6bond200x4.nccl.xml") + " --rings 8"}) {
    Result json = weftTopo(args + " --json");
    ASSERT_EQ(json.code, 0) << json.out;
    const nlohmann::json rings = nlohmann::json::parse(json.out)["rings"]["rings"];
    ASSERT_GE(rings.size(), 2u) << args;
    ASSERT_EQ(rings[0]["order"], rings[1]["order"]) << args << ": the case this test is about";
    const std::string note = "ring 0's path again: one more channel";
    EXPECT_NE(rings[1]["why"].get<std::string>().find(note), std::string::npos) << rings[1];
    EXPECT_EQ(rings[0]["why"].get<std::string>().find("path again"), std::string::npos);
    Result text = weftTopo(args);
    ASSERT_EQ(text.code, 0) << text.out;
    std::string flat = std::regex_replace(text.out, std::regex("\\s+"), " ");
    EXPECT_NE(flat.find(note), std::string::npos) << text.out;
  }
}

// How often `what` occurs in `text`.
size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

// Without N, --rings and --trees plan the same ranks per host: one per GPU, else (or with
// --device cpu) one per NUMA node. The counts come from the file itself: GPU endpoints have PCI
// class 0x0302xx, NUMA nodes are <cpu> elements.
TEST(WeftTopo, DefaultRanksPerHost) {
  std::string file = data("azure-ndv4-a100x8-hdr200x8.nccl.xml");
  std::string xml = test::readFile(file);
  std::string gpus = std::to_string(occurrences(xml, "class=\"0x0302"));
  std::string numa = std::to_string(occurrences(xml, "<cpu "));
  ASSERT_EQ(gpus + "/" + numa, "8/4");
  Result r = weftTopo("--topo " + file + " --rings --trees");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("Rings: " + gpus + " GPU rank(s)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Trees: one host, so a chain; " + gpus + " GPU rank(s)"), std::string::npos)
      << r.out;
  Result cpu = weftTopo("--topo " + file + " --trees --device cpu");
  ASSERT_EQ(cpu.code, 0) << cpu.out;
  cpu.out = std::regex_replace(cpu.out, std::regex("\\s+"), " ");
  EXPECT_NE(cpu.out.find("chain; " + numa + " CPU rank(s)"), std::string::npos) << cpu.out;
  EXPECT_NE(cpu.out.find("one per NUMA node by default"), std::string::npos) << cpu.out;
  // --rings N still decides for both.
  Result four = weftTopo("--topo " + file + " --rings 4 --trees");
  EXPECT_NE(four.out.find("chain; 4 GPU rank(s)"), std::string::npos) << four.out;
  // This machine, when it has no NVIDIA GPU: one rank per NUMA node sysfs lists, and a hint
  // where that is a single rank.
  if (access("/proc/driver/nvidia/gpus", F_OK) == 0) return;
  int nodes = 0;
  while (access(("/sys/devices/system/node/node" + std::to_string(nodes)).c_str(), F_OK) == 0)
    ++nodes;
  if (nodes == 0) GTEST_SKIP() << "sysfs lists no NUMA node";
  Result here = weftTopo("--trees", "env -u WEFT_TOPO_FILE");
  ASSERT_EQ(here.code, 0) << here.out;
  std::string flat = std::regex_replace(here.out, std::regex("\\s+"), " ");
  EXPECT_NE(flat.find("chain; " + std::to_string(nodes) + " CPU rank(s)"), std::string::npos)
      << here.out;
  EXPECT_NE(flat.find("--ranks N for more"), std::string::npos) << here.out;
}

TEST(WeftTopo, WrapKeepsClausesWhole) {
  using topotool::wrap;
  EXPECT_EQ(wrap("short text", 40, "why: ", "     "), "why: short text\n");
  // The clause after "; " moves to the next line whole rather than splitting.
  EXPECT_EQ(wrap("alpha beta; gamma delta epsilon", 24, "> ", "  "),
            "> alpha beta;\n  gamma delta epsilon\n");
  // A clause longer than a line breaks between words.
  EXPECT_EQ(wrap("one two three four five six", 12, "", ""), "one two\nthree four\nfive six\n");
  // A word longer than the width stays whole.
  EXPECT_EQ(wrap("abcdefghijkl x", 5, "", ""), "abcdefghijkl\nx\n");
  EXPECT_EQ(topotool::wrapList({"GPU0 NIC0", "GPU1 NIC1", "GPU2 NIC2"}, 24, "- ", "  "),
            "- GPU0 NIC0, GPU1 NIC1,\n  GPU2 NIC2\n");
}

TEST(WeftTopo, BadFilesExitTwoAndNameTheProblem) {
  test::TempDir dir;
  struct Case {
    std::string path, expect;
  };
  std::string sparse = dir.path() + "/big.xml";
  int fd = open(sparse.c_str(), O_CREAT | O_WRONLY, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 3LL << 30), 0);
  close(fd);
  std::vector<Case> cases = {
      {dir.file("text.xml", "just words\n"), "neither XML"},
      {dir.file("root.xml", "<nccl version=\"1\"/>"), "wrong root element <nccl>"},
      {dir.file("broken.xml", "<system><cpu numaid=\"0\">"), "not well-formed XML"},
      {dir.file("dangling.xml",
                "<system><cpu numaid=\"0\"><pci busid=\"0000:01:00.0\" class=\"0x030200\"><gpu "
                "dev=\"0\" sm=\"80\" rank=\"0\" gdr=\"0\"><nvlink target=\"0000:09:00.0\" "
                "count=\"1\" tclass=\"0x030200\"/></gpu></pci></cpu></system>"),
       "dangling reference"},
      {dir.file("dup.xml",
                "<system><cpu numaid=\"0\"><pci busid=\"0000:01:00.0\"/><pci "
                "busid=\"0000:01:00.0\"/></cpu></system>"),
       "duplicate bus id 0000:01:00.0"},
      {dir.file("binary.bin", std::string("\x7f"
                                          "ELF\0\0\1",
                                          7)),
       "binary data"},
      {sparse, "3.0 GiB"},
      // The DGX-1 matrix with GPU0's row saying NV2 to GPU1, where GPU1's row says NV1.
      {dir.file("asym.nvsmi.txt",
                [] {
                  std::string t = test::readFile(data("nvidia-dgx1-v100-4xedr.nvsmi.txt"));
                  return t.replace(t.find("GPU0\t X \tNV1"), 12, "GPU0\t X \tNV2");
                }()),
       "not symmetric: row GPU0, column GPU1 is NV2, but row GPU1, column GPU0 is NV1"},
      {dir.path() + "/missing.xml", "cannot open"},
      {dir.path(), "is a directory"},
  };
  if (hwlocAvailable()) {
    // hwloc 2.9 itself would crash on this one (an object without complete_cpuset).
    cases.push_back({dir.file("nocomplete.xml",
                              "<topology version=\"2.0\"><object type=\"Machine\" "
                              "cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\"/>"
                              "</topology>"),
                     "has a cpuset but no complete_cpuset"});
  }
  for (const Case& c : cases) {
    Result r = weftTopo("--topo " + c.path);
    EXPECT_EQ(r.code, 2) << c.path << "\n" << r.out;
    EXPECT_NE(r.out.find(c.path), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(c.expect), std::string::npos) << r.out;
    EXPECT_EQ(r.out.rfind("weft-topo: ", 0), 0u) << r.out;
  }
}

TEST(WeftTopo, FormatsForPrograms) {
  Result json = weftTopo("--topo " + data("aws-p4d.24xlarge-a100x8-efa4.nccl.xml") +
                         " --json --rings 8 --trees --hosts 2");
  ASSERT_EQ(json.code, 0) << json.out;
  nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["counts"]["gpus"], 8);
  EXPECT_EQ(j["rings"]["rings"][0]["order"].size(), 8u);
  EXPECT_EQ(j["trees"]["trees"].size(), 2u);
  Result xml = weftTopo("--topo " + data("aws-p4d.24xlarge-a100x8-efa4.nccl.xml") + " --nccl-xml");
  ASSERT_EQ(xml.code, 0);
  EXPECT_EQ(xml.out.rfind("<system version=\"1\">", 0), 0u);
  Result dot = weftTopo("--topo " + data("aws-p4d.24xlarge-a100x8-efa4.nccl.xml") + " --dot");
  ASSERT_EQ(dot.code, 0);
  EXPECT_EQ(dot.out.rfind("graph topology {", 0), 0u);
  Result both = weftTopo("--json --dot");
  EXPECT_EQ(both.code, 1);
  Result usage = weftTopo("--rings 0");
  EXPECT_EQ(usage.code, 1);
  Result help = weftTopo("--help");
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("--matrix"), std::string::npos);
}

// Every "..._gbs" number anywhere in `j`, by its path.
void bandwidths(const nlohmann::json& j, const std::string& path,
                std::vector<std::pair<std::string, nlohmann::json>>* out) {
  for (auto it = j.begin(); j.is_structured() && it != j.end(); ++it) {
    std::string key = j.is_object() ? it.key() : "";
    std::string at = path;
    at += "/" + key;
    if (key.size() > 4 && key.substr(key.size() - 4) == "_gbs") out->emplace_back(at, *it);
    bandwidths(*it, at, out);
  }
}

// No link of these machines moves 1 TB/s in one direction (the fastest, NVSwitch ports, carry a
// few hundred GB/s), so a bandwidth that large is a placeholder: the JSON gives null instead.
// Four CPU ranks on rccl-model's one NUMA node share memory, which nobody measured.
TEST(WeftTopo, JsonHasNoPlaceholderBandwidth) {
  Result shm = weftTopo("--topo " + data("rccl-model-8x-gfx906-pcie-2nic.nccl.xml") +
                        " --json --rings 4 --trees --device cpu");
  ASSERT_EQ(shm.code, 0) << shm.out;
  nlohmann::json j = nlohmann::json::parse(shm.out);
  EXPECT_TRUE(j["rings"]["rings"][0]["bw_gbs"].is_null()) << j["rings"];
  EXPECT_TRUE(j["rings"]["rings"][0]["bottleneck_gbs"].is_null()) << j["rings"];
  EXPECT_TRUE(j["trees"]["trees"][0]["bottleneck_gbs"].is_null()) << j["trees"];
  std::vector<std::string> args = {"--json --rings 4 --trees --device cpu"};
  for (const std::string& f : test::dataFiles())
    args.push_back("--topo " + data(f) + " --json --rings 8 --trees");
  for (const std::string& a : args) {
    Result r = weftTopo(a, "env -u WEFT_TOPO_FILE");
    if (r.out.find("no hwloc support") != std::string::npos) continue;
    ASSERT_EQ(r.code, 0) << a << "\n" << r.out;
    std::vector<std::pair<std::string, nlohmann::json>> all;
    bandwidths(nlohmann::json::parse(r.out), "", &all);
    EXPECT_FALSE(all.empty()) << a;
    for (const auto& [at, bw] : all) {
      EXPECT_TRUE(bw.is_null() || (bw.is_number() && bw.get<double>() < 1000)) << a << at << bw;
    }
  }
}

TEST(WeftTopo, HonoursWeftTopoFile) {
  Result r = weftTopo("", "WEFT_TOPO_FILE=" + data("azure-ndv5-h100x8-ndr400x8.nccl.xml"));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("azure-ndv5"), std::string::npos);
  EXPECT_NE(r.out.find("GPUs: 8"), std::string::npos);
  EXPECT_NE(r.out.find("read from WEFT_TOPO_FILE"), std::string::npos);
  Result bad = weftTopo("", "WEFT_TOPO_FILE=/nonexistent.xml");
  EXPECT_EQ(bad.code, 2);
}

TEST(WeftTopo, RunsInProcess) {
  const char* argv[] = {"weft-topo", "--topo", nullptr, "--rings", "4", "--device", "cpu"};
  std::string file = data("azure-ndv4-a100x8-hdr200x8.nccl.xml");
  argv[2] = file.c_str();
  topotool::ParseResult parsed = topotool::parseOptions(7, argv);
  ASSERT_TRUE(parsed.options) << parsed.message;
  std::ostringstream out, err;
  EXPECT_EQ(topotool::run(*parsed.options, out, err), topotool::kExitOk) << err.str();
  EXPECT_NE(out.str().find("4 CPU rank(s)"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace weft::topo
