// The readers on small texts: what they accept, and the message for what they refuse.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

#include "tests/topology/test_util.h"
#include "topology/file_io.h"
#include "topology/hwloc_xml_reader.h"
#include "topology/load.h"
#include "topology/nccl_xml_reader.h"
#include "topology/nccl_xml_writer.h"
#include "topology/nvsmi_reader.h"
#include "topology/paths.h"

namespace weft::topo {
namespace {

using test::TempDir;

std::string refusal(const std::string& text) {
  System s;
  Status st = parseTopologyText(text, "t.xml", &s);
  EXPECT_FALSE(st.ok()) << text;
  EXPECT_EQ(s.nodes.size(), 0u);
  return st.message();
}

TEST(Detect, RecognisesFormatsByContent) {
  std::string why;
  EXPECT_EQ(detectFormat("<system version=\"1\"/>", &why), FileFormat::kNcclXml);
  EXPECT_EQ(detectFormat("\xEF\xBB\xBF<?xml version=\"1.0\"?>\n<!-- c -->\n<system>", &why),
            FileFormat::kNcclXml);
  EXPECT_EQ(detectFormat("<?xml version=\"1.0\"?><!DOCTYPE topology SYSTEM \"hwloc2.dtd\">"
                         "<topology version=\"2.0\">",
                         &why),
            FileFormat::kHwlocXml);
  EXPECT_EQ(detectFormat("\tGPU0\tGPU1\nGPU0\t X \tNV1\n", &why), FileFormat::kNvsmiMatrix);
  EXPECT_EQ(detectFormat("<graphs version=\"1\">", &why), FileFormat::kUnknown);
  EXPECT_NE(why.find("NCCL graph"), std::string::npos);
  EXPECT_EQ(detectFormat("<html>", &why), FileFormat::kUnknown);
  EXPECT_NE(why.find("wrong root element <html>"), std::string::npos);
  EXPECT_EQ(detectFormat("hello", &why), FileFormat::kUnknown);
  EXPECT_EQ(detectFormat(std::string("ab\0cd", 5), &why), FileFormat::kUnknown);
  EXPECT_NE(why.find("binary"), std::string::npos);
}

TEST(FileIo, RefusesBigFilesBeforeReading) {
  TempDir dir;
  std::string path = dir.path() + "/huge.xml";
  int fd = open(path.c_str(), O_CREAT | O_WRONLY, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 3LL << 30), 0);  // 3 GB, sparse: nothing is written
  close(fd);
  std::string text;
  Status st = readTopologyFile(path, &text);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find(path), std::string::npos);
  EXPECT_NE(st.message().find("3.0 GiB"), std::string::npos);
  EXPECT_NE(st.message().find("not read"), std::string::npos);
  EXPECT_TRUE(text.empty());
}

TEST(FileIo, NamesTheFileAndTheProblem) {
  TempDir dir;
  std::string text;
  Status missing = readTopologyFile(dir.path() + "/nope.xml", &text);
  EXPECT_NE(missing.message().find("nope.xml: cannot open"), std::string::npos);
  Status directory = readTopologyFile(dir.path(), &text);
  EXPECT_NE(directory.message().find("is a directory"), std::string::npos);
  Status empty = readTopologyFile(dir.file("empty.xml", ""), &text);
  EXPECT_NE(empty.message().find("is empty"), std::string::npos);
  Status device = readTopologyFile("/dev/zero", &text);
  EXPECT_NE(device.message().find("not a regular file"), std::string::npos);
  ASSERT_TRUE(readTopologyFile(dir.file("ok.xml", "<system/>"), &text).ok());
  EXPECT_EQ(text, "<system/>");
}

TEST(NcclXml, RefusesBadFilesWithAReason) {
  EXPECT_NE(refusal("this is not xml").find("neither XML"), std::string::npos);
  EXPECT_NE(refusal("<system><cpu numaid=\"0\">").find("not well-formed XML at line 1"),
            std::string::npos);
  EXPECT_NE(refusal("<topologyx/>").find("wrong root element"), std::string::npos);
  EXPECT_NE(refusal("<system version=\"1\"/>").find("no <cpu>"), std::string::npos);
  EXPECT_NE(refusal("<system><cpu/></system>").find("without numaid"), std::string::npos);
  EXPECT_NE(refusal("<system><cpu numaid=\"x\"/></system>").find("not a valid number"),
            std::string::npos);
  EXPECT_NE(refusal("<system><cpu numaid=\"0\"/><cpu numaid=\"0\"/></system>")
                .find("numaid 0 appears twice"),
            std::string::npos);
  EXPECT_NE(refusal("<system><cpu numaid=\"0\"><pci class=\"0x030200\"/></cpu></system>")
                .find("without busid"),
            std::string::npos);
  EXPECT_NE(refusal("<system><cpu numaid=\"0\"><pci busid=\"zz\"/></cpu></system>")
                .find("not a PCI bus id"),
            std::string::npos);
  std::string dup =
      "<system>\n<cpu numaid=\"0\">\n<pci busid=\"0000:01:00.0\"/>\n</cpu>\n<cpu numaid=\"1\">\n"
      "<pci busid=\"0000:01:00.0\"/>\n</cpu>\n</system>\n";
  EXPECT_NE(refusal(dup).find("duplicate bus id 0000:01:00.0 (lines 3 and 6)"), std::string::npos);
  std::string dangling =
      "<system><cpu numaid=\"0\"><pci busid=\"0000:01:00.0\" class=\"0x030200\">\n"
      "<gpu dev=\"0\" sm=\"80\" rank=\"0\" gdr=\"1\"><nvlink target=\"0000:02:00.0\" count=\"2\" "
      "tclass=\"0x030200\"/></gpu></pci></cpu></system>";
  std::string why = refusal(dangling);
  EXPECT_NE(why.find("dangling reference"), std::string::npos) << why;
  EXPECT_NE(why.find("0000:02:00.0, which is not in the file"), std::string::npos) << why;
  EXPECT_NE(why.find("line 2"), std::string::npos) << why;
  std::string noCount =
      "<system><cpu numaid=\"0\"><pci busid=\"0000:01:00.0\"><gpu dev=\"0\" sm=\"80\" rank=\"0\" "
      "gdr=\"1\"><nvlink target=\"0000:02:00.0\" tclass=\"0x068000\"/></gpu></pci></cpu></system>";
  EXPECT_NE(refusal(noCount).find("count of 1 to 64"), std::string::npos);
  std::string deep = "<system><cpu numaid=\"0\">";
  for (int i = 0; i < 100; ++i)
    deep += "<pci busid=\"0000:" + std::to_string(10 + i % 80) + ":00.0\">";
  EXPECT_NE(refusal(deep + "</system>").find("not well-formed"), std::string::npos);
  std::string closed = deep;
  for (int i = 0; i < 100; ++i)
    closed += "</pci>";
  closed += "</cpu></system>";
  EXPECT_NE(refusal(closed).find("nested more than"), std::string::npos);
  EXPECT_NE(refusal("<graphs><graph/></graphs>").find("NCCL graph file"), std::string::npos);
}

TEST(NcclXml, ReadsPartialAndFullElements) {
  System s;
  std::string text =
      "<system version=\"1\">\n"
      " <cpu numaid=\"0\" affinity=\"0000000f\" arch=\"x86_64\" vendor=\"GenuineIntel\" "
      "familyid=\"6\" modelid=\"143\">\n"
      "  <pci busid=\"ffff:ff:01.0\" class=\"0x060400\" link_speed=\"32.0 GT/s PCIe\" "
      "link_width=\"16\">\n"
      "   <pci busid=\"0001:00:00.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" "
      "link_width=\"16\"/>\n"
      "   <pci busid=\"0101:00:00.0\" class=\"0x020700\" link_speed=\"32.0 GT/s PCIe\" "
      "link_width=\"16\"/>\n"
      "   <pci busid=\"0102:00:00.0\" class=\"0x020000\"><nic><net name=\"eth9\" dev=\"0\" "
      "speed=\"100000\"/></nic></pci>\n"
      "   <pci busid=\"0003:00:00.0\"/>\n"
      "  </pci>\n"
      "  <unknown/>\n"
      " </cpu>\n"
      "</system>\n";
  ASSERT_TRUE(parseNcclXml(text, "partial.xml", &s).ok());
  EXPECT_EQ(s.count(NodeKind::kCpu), 1);
  EXPECT_EQ(s.count(NodeKind::kPciSwitch), 1);
  EXPECT_EQ(s.count(NodeKind::kGpu), 1);
  EXPECT_EQ(s.count(NodeKind::kNic), 2);
  EXPECT_EQ(s.count(NodeKind::kPciDevice), 1);
  int gpu = s.findBusId("0001:00:00.0");
  ASSERT_GE(gpu, 0);
  EXPECT_FALSE(s.nodes[gpu].gpu.described);
  int bare = s.findBusId("0101:00:00.0");
  EXPECT_EQ(s.nodes[bare].name, "NIC0");
  int named = s.findBusId("0102:00:00.0");
  EXPECT_EQ(s.nodes[named].name, "eth9");
  EXPECT_EQ(s.nodes[s.cpuOf(gpu)].cpu.cpus.toList(), "0-3");
  EXPECT_GE(s.notes.size(), 2u);
}

TEST(NcclXml, NvlinkToABareGpuIsIgnoredAsNcclDoes) {
  // Found by fuzzing: the export gave the bare GPU a <gpu> element, so it read back different.
  System s;
  std::string text =
      "<system><cpu numaid=\"0\"><pci busid=\"0000:01:00.0\" class=\"0x030200\"><gpu dev=\"0\" "
      "sm=\"80\" rank=\"0\" gdr=\"0\"><nvlink target=\"0000:02:00.0\" count=\"2\" "
      "tclass=\"0x030200\"/></gpu></pci><pci busid=\"0000:02:00.0\" class=\"0x030200\"/></cpu>"
      "</system>";
  ASSERT_TRUE(parseNcclXml(text, "bare.xml", &s).ok());
  for (const Link& l : s.links)
    EXPECT_NE(l.kind, LinkKind::kNvlink);
  System back;
  ASSERT_TRUE(parseNcclXml(writeNcclXml(s), "export", &back).ok());
  EXPECT_EQ(canonicalForm(back), canonicalForm(s));
}

TEST(Nvsmi, RefusesBadMatrices) {
  auto why = [](const std::string& text) {
    System s;
    Status st = parseNvsmiMatrix(text, "m.txt", &s);
    EXPECT_FALSE(st.ok()) << text;
    return st.message();
  };
  EXPECT_NE(why("\tGPU0\tGPU1\nGPU0\t X \tNV1\n").find("has no row"), std::string::npos);
  EXPECT_NE(why("\tGPU0\tGPU1\nGPU0\t X \tNV1\nGPU1\tNV1\n").find("row GPU1 has 1 cells"),
            std::string::npos);
  EXPECT_NE(why("\tGPU0\tGPU1\nGPU0\t X \tFOO\nGPU1\tNV1\t X \n").find("\"FOO\" is not"),
            std::string::npos);
  EXPECT_NE(why("\tGPU0\tGPU1\nGPU0\tPIX\tNV1\nGPU1\tNV1\t X \n").find("is not X"),
            std::string::npos);
  EXPECT_NE(why("\tGPU0\tGPU1\nGPU0\t X \tNV1\nGPU9\tNV1\t X \n").find("dangling reference"),
            std::string::npos);
  EXPECT_NE(why("\tGPU0\tGPU0\nGPU0\t X \tNV1\nGPU0\tNV1\t X \n").find("twice"), std::string::npos);
  EXPECT_NE(why("\tGPU0\tCPU Affinity\nGPU0\t X \tzz\n").find("not a CPU list"), std::string::npos);
  EXPECT_NE(why("no header here\n").find("no nvidia-smi topo -m header"), std::string::npos);
  // Found by fuzzing: a NIC legend renaming a device to a name with control characters.
  EXPECT_NE(why("\tGPU0\tNIC0\nGPU0\t X \tPIX\nNIC0\tPIX\t X \n\nNIC Legend:\n  NIC0: ml\x01x\n")
                .find("is not a plain name"),
            std::string::npos);
}

// The DGX-1 file has GPU0/GPU1 NV1 both ways; with the GPU0 row saying NV2 the file contradicts
// itself, and the message names both cells.
TEST(Nvsmi, RefusesAnAsymmetricMatrix) {
  std::string text = test::readFile(test::dataPath("nvidia-dgx1-v100-4xedr.nvsmi.txt"));
  const std::string row = "GPU0\t X \tNV1\tNV1\tNV2";
  ASSERT_NE(text.find(row), std::string::npos);
  System s;
  ASSERT_TRUE(parseNvsmiMatrix(text, "dgx1.txt", &s).ok());
  text.replace(text.find(row), row.size(), "GPU0\t X \tNV2\tNV1\tNV2");
  Status st = parseNvsmiMatrix(text, "dgx1.txt", &s);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(s.nodes.size(), 0u);
  EXPECT_EQ(st.message(),
            "dgx1.txt: the matrix is not symmetric: row GPU0, column GPU1 is NV2, but row GPU1, "
            "column GPU0 is NV1");
  // PCIe classes too: mlx5_0 is PIX to GPU0 in both cells of the file; one of them made SYS.
  text = test::readFile(test::dataPath("nvidia-dgx1-v100-4xedr.nvsmi.txt"));
  const std::string nic = "mlx5_0\tPIX\t";
  ASSERT_NE(text.find(nic), std::string::npos);
  text.replace(text.find(nic), nic.size(), "mlx5_0\tSYS\t");
  st = parseNvsmiMatrix(text, "dgx1.txt", &s);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("row GPU0, column mlx5_0 is PIX, but row mlx5_0, column GPU0 is SYS"),
            std::string::npos)
      << st.message();
}

TEST(Nvsmi, ReadsSpacesNodeAndTheNicLegend) {
  System s;
  std::string text =
      "        GPU0    GPU1    NIC0    CPU Affinity    NUMA Affinity\n"
      "GPU0     X      NODE    PIX     0-15    0\n"
      "GPU1    NODE     X      NODE    0-15    0\n"
      "NIC0    PIX     NODE     X\n"
      "\nLegend:\n\n  X    = Self\n\nNIC Legend:\n\n  NIC0: mlx5_4\n";
  ASSERT_TRUE(parseNvsmiMatrix(text, "m.txt", &s).ok());
  EXPECT_EQ(s.count(NodeKind::kGpu), 2);
  EXPECT_EQ(s.count(NodeKind::kHostBridge), 2);  // NODE: two host bridges in one NUMA node
  int nic = s.nics().front();
  EXPECT_EQ(s.nodes[nic].name, "mlx5_4");
  EXPECT_TRUE(s.notes.size() >= 1);
}

TEST(Hwloc, DowngradesVersion3Files) {
  std::string v3 =
      "<?xml version=\"1.0\"?>\n<topology version=\"3.0\">\n"
      "<object type=\"Machine\" os_index=\"0\"><object type=\"OSDev\" name=\"eth0\" "
      "osdev_type=\"16\"/><object type=\"OSDev\" name=\"mlx5_0\" osdev_type=\"48\"/>"
      "<object type=\"OSDev\" name=\"cuda0\" osdev_type=\"12\"/></object>\n"
      "<info name=\"Backend\" value=\"Linux\"/>\n</topology>\n";
  std::string out;
  ASSERT_TRUE(downgradeHwlocXml(v3, "v3.xml", &out).ok());
  EXPECT_NE(out.find("version=\"2.0\""), std::string::npos);
  EXPECT_NE(out.find("name=\"eth0\" osdev_type=\"2\""), std::string::npos);
  EXPECT_NE(out.find("name=\"mlx5_0\" osdev_type=\"3\""), std::string::npos);
  EXPECT_NE(out.find("name=\"cuda0\" osdev_type=\"1\""), std::string::npos);
  // The info moved into the root object.
  EXPECT_LT(out.find("Backend"), out.find("</object>"));
  std::string v2 = "<topology version=\"2.0\"><object type=\"Machine\"/></topology>";
  ASSERT_TRUE(downgradeHwlocXml(v2, "v2.xml", &out).ok());
  EXPECT_EQ(out, v2);
  EXPECT_FALSE(downgradeHwlocXml("<topology", "bad.xml", &out).ok());
}

// The fuzz seeds written for the hwloc reader (2.x and 3.0 formats) load; CPUID brand strings
// lose their padding; ports without a speed are noted as assumed.
TEST(Hwloc, SeedsLoadWithTrimmedModelsAndSpeedNotes) {
  if (!hwlocAvailable()) GTEST_SKIP() << "built without hwloc";
  System s;
  Status st = loadTopologyFile(test::corpusPath("hwloc2_gpu_ib.xml"), &s);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(s.count(NodeKind::kGpu), 2);
  EXPECT_EQ(s.count(NodeKind::kNic), 2);
  EXPECT_EQ(s.count(NodeKind::kPciSwitch), 1);
  EXPECT_EQ(s.nodes[s.findCpu(0)].cpu.modelName, "Seed Xeon 2-core");  // "...2-core   " in the file
  EXPECT_EQ(s.nodes[s.findCpu(1)].cpu.vendor, "GenuineIntel");
  int nvlink = s.linkBetween(test::find(s, "GPU0"), test::find(s, "GPU1"), LinkKind::kNvlink);
  ASSERT_GE(nvlink, 0);
  EXPECT_EQ(s.links[nvlink].nvlinks, 2);  // 50 GB/s of V100 NVLink2 at 25 GB/s each
  auto noted = [&](const std::string& what) {
    for (const std::string& n : s.notes) {
      if (n.find(what) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(noted("hwloc XML gives no speed for 2 network port(s): 10 Gb/s (1.25 GB/s) assumed"));
  st = loadTopologyFile(test::corpusPath("hwloc3_usnic.xml"), &s);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(s.count(NodeKind::kGpu), 1);
  EXPECT_EQ(s.count(NodeKind::kNic), 1);  // the VF without an OS device is left out
  EXPECT_EQ(s.nodes[s.netsOf(test::find(s, "usnic_9")).front()].net.ifname, "eth3");
  EXPECT_TRUE(noted("hwloc XML gives no speed for 1 network port(s)"));
  // A file whose NICs all have a speed gets no such note.
  ASSERT_TRUE(
      loadTopologyFile(test::dataPath("alibaba-hgx-a100x8-cx6bond200x4.nccl.xml"), &s).ok());
  EXPECT_FALSE(noted("gives no speed"));
}

// Files that crash hwloc 2.9's loader (found by the fuzzer) are refused before it sees them, and
// numbers hwloc keeps for enumerated attributes it does not know are read without harm.
TEST(Hwloc, RefusesWhatHwlocWouldCrashOn) {
  if (!hwlocAvailable()) GTEST_SKIP() << "built without hwloc: hwloc XML files cannot be loaded";
  const std::string seed = test::readFile(test::corpusPath("hwloc2_gpu_ib.xml"));
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string t = seed;
    size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? t : t.replace(at, from.size(), to);
  };
  System s;
  Status st = parseHwlocXml(replaced("complete_cpuset=\"0x00000001\" nodeset=\"0x00000001\" "
                                     "complete_nodeset=\"0x00000001\" gp_index=\"6\"",
                                     "nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" "
                                     "gp_index=\"6\""),
                            "pu.xml", &s);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("pu.xml: <object type=\"PU\"> at byte "), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("has a cpuset but no complete_cpuset"), std::string::npos);
  st = parseHwlocXml(replaced("complete_nodeset=\"0x00000001\" gp_index=\"3\"", "gp_index=\"3\""),
                     "numa.xml", &s);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("<object type=\"NUMANode\">"), std::string::npos) << st.message();
  st = parseHwlocXml(
      "<topology version=\"2.0\"><object type=\"Bridge\" gp_index=\"1\" bridge_type=\"1-1\" "
      "depth=\"0\" bridge_pci=\"0000:[01-01]\" pci_busid=\"0000:00:01.0\" pci_type=\"0604 "
      "[8086:0001] [0000:0000] 00 00\"/></topology>",
      "bridge.xml", &s);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("bridge.xml: the root object is a Bridge"), std::string::npos)
      << st.message();
  // A bitmap that starts with a comma trips an assertion in hwloc 2.9's parser, in an object's
  // sets and in any other element that carries one.
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"complete_cpuset=\"0x00000001\"", "complete_cpuset=\",0x00000001\""},
           {"nodeset=\"0x00000001\" complete_nodeset", "nodeset=\",,1\" complete_nodeset"},
           {"</topology>", "<cpukind cpuset=\",1\"/></topology>"}}) {
    st = parseHwlocXml(replaced(from, to), "comma.xml", &s);
    ASSERT_FALSE(st.ok()) << to;
    EXPECT_NE(st.message().find("a bitmap that starts with a comma"), std::string::npos)
        << st.message();
  }
  // A control character in a Machine's complete_nodeset crashes hwloc 2.9 as a reference, and raw
  // in a 3.x file (whose downgrade writes it as one): refused either way. References to allowed
  // characters load.
  const std::string machineNodes = "complete_nodeset=\"0x00000003\" allowed";
  for (const std::string& bad :
       {std::string("0x0\x10"
                    "3"),
        std::string("0x0&#16;3"), std::string("0x0&#x1f;3"), std::string("0x0&#0000000000001;3")}) {
    st = parseHwlocXml(replaced(machineNodes, "complete_nodeset=\"" + bad + "\" allowed"),
                       "control.xml", &s);
    ASSERT_FALSE(st.ok()) << bad;
    EXPECT_NE(st.message().find("is not allowed in XML"), std::string::npos) << st.message();
  }
  // So does an '&' that starts no reference (libxml2 reports it and reads on with another value).
  st = parseHwlocXml(replaced(machineNodes, "complete_nodeset=\"0&#0000003\" allowed"),
                     "ampersand.xml", &s);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("the '&' at byte "), std::string::npos) << st.message();
  EXPECT_TRUE(
      parseHwlocXml(replaced("value=\"", "value=\"&#x41;&#9;&amp;&lt;"), "ok.xml", &s).ok());
  // Bridge types hwloc does not know (its enum has 0 and 1): loaded or refused, never undefined
  // (the sanitizer build checks).
  st = parseHwlocXml(replaced("bridge_type=\"1-1\" depth=\"1\"", "bridge_type=\"7-1\" depth=\"1\""),
                     "bridge-type.xml", &s);
  if (st.ok()) {
    EXPECT_EQ(s.count(NodeKind::kGpu), 2);
  }
  st = parseHwlocXml(replaced("osdev_type=\"2\"", "osdev_type=\"99\""), "osdev.xml", &s);
  if (st.ok()) {
    EXPECT_EQ(s.count(NodeKind::kGpu), 2);
  }
  // A root bridge whose upstream type hwloc does not know is a host bridge, so what hangs below
  // it still exports and reads back (it once became a PCI switch without a bus id).
  st = parseHwlocXml(replaced("bridge_type=\"0-1\" depth=\"0\" bridge_pci=\"0000:[00-03]\"",
                              "bridge_type=\"5-1\" depth=\"0\" bridge_pci=\"0000:[00-03]\""),
                     "upstream.xml", &s);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(s.count(NodeKind::kHostBridge), 2);
  System back;
  ASSERT_TRUE(parseNcclXml(writeNcclXml(s), "export", &back).ok());
  EXPECT_EQ(canonicalForm(back), canonicalForm(s));
  // Bus ids hwloc takes but PCI cannot have (device 0x30), or that two devices share.
  st = parseHwlocXml(replaced("pci_busid=\"0000:81:00.0\"", "pci_busid=\"0000:81:30.0\""),
                     "dev.xml", &s);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("dev.xml: PCI bus id 0000:81:30.0 is impossible"), std::string::npos)
      << st.message();
  st = parseHwlocXml(replaced("pci_busid=\"0000:81:00.0\"", "pci_busid=\"0000:03:00.0\""),
                     "twice.xml", &s);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("PCI bus id 0000:03:00.0 is used twice"), std::string::npos)
      << st.message();
  // Two host bridges that own the same buses would be one node twice over.
  st = parseHwlocXml(replaced("bridge_pci=\"0000:[80-81]\"", "bridge_pci=\"0000:[00-03]\""),
                     "hostbridges.xml", &s);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("two host bridges own PCI buses 0000:[00-03]"), std::string::npos)
      << st.message();
}

// The Minsky file's NVLinkBandwidth matrix joins nvml2 (OSDev:334) and nvml3 (OSDev:335) at
// 40000 MB/s. Naming an object the file lacks instead, hwloc drops that row and column; the link
// goes, and a note says why.
TEST(Hwloc, NotesDistancesNamingMissingObjects) {
  if (!hwlocAvailable()) GTEST_SKIP() << "built without hwloc";
  const std::string original =
      test::readFile(test::dataPath("ibm-power8-minsky-p100x4-nvlink.hwloc.xml"));
  auto noted = [](const System& s, const std::string& what) {
    return std::any_of(s.notes.begin(), s.notes.end(),
                       [&](const std::string& n) { return n.find(what) != std::string::npos; });
  };
  System s;
  ASSERT_TRUE(parseHwlocXml(original, "minsky.xml", &s).ok());
  EXPECT_EQ(nvlinkCount(s, test::find(s, "GPU2"), test::find(s, "GPU3")), 2);
  EXPECT_FALSE(noted(s, "no object"));
  std::string text = original;
  const std::string gpu3 = "OSDev:335";
  ASSERT_NE(text.find(gpu3), std::string::npos);
  text.replace(text.find(gpu3), gpu3.size(), "OSDev:999");
  Status st = parseHwlocXml(text, "minsky.xml", &s);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(nvlinkCount(s, test::find(s, "GPU2"), test::find(s, "GPU3")), 0);
  EXPECT_EQ(nvlinkCount(s, test::find(s, "GPU0"), test::find(s, "GPU1")), 2);  // the rest stays
  EXPECT_TRUE(noted(s, "hwloc distances NVLinkBandwidth (at byte ")) << s.notes.back();
  EXPECT_TRUE(noted(s, "name OSDev:999, which the file has no object for: hwloc drops it"))
      << s.notes.back();
}

// A GPU's NVLinks to a CPU reach its own CPU, as NCCL's XML has them. A matrix whose row names
// GPU3's cuda3 (OSDev:331, under CPU1) where GPU0's nvml0 stood links GPU3 to CPU0: that link is
// noted and dropped, so the export reads back to the same graph (the fuzzer found it).
TEST(Hwloc, NvlinkToAnotherGpusCpuIsNotedAndDropped) {
  if (!hwlocAvailable()) GTEST_SKIP() << "built without hwloc";
  std::string text = test::readFile(test::dataPath("ibm-power8-minsky-p100x4-nvlink.hwloc.xml"));
  const std::string row = "<indexes length=\"62\">OSDev:332 ";
  ASSERT_NE(text.find(row), std::string::npos);
  text.replace(text.find(row), row.size(), "<indexes length=\"62\">OSDev:331 ");
  System s;
  Status st = parseHwlocXml(text, "minsky.xml", &s);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(nvlinkCount(s, test::find(s, "GPU3"), test::find(s, "CPU0")), 0);
  EXPECT_EQ(nvlinkCount(s, test::find(s, "GPU3"), test::find(s, "CPU1")), 2);
  EXPECT_TRUE(std::any_of(s.notes.begin(), s.notes.end(), [](const std::string& n) {
    return n.find("links the GPU at 000b:01:00.0 to CPU0, which is not its CPU; ignored") !=
           std::string::npos;
  })) << ::testing::PrintToString(s.notes);
  System back;
  ASSERT_TRUE(parseNcclXml(writeNcclXml(s), "export", &back).ok());
  EXPECT_EQ(canonicalForm(back), canonicalForm(s));
}

// hwloc2_gpu_ib.xml's NVLinkBandwidth joins cuda0 (OSDev:14) and cuda1 (OSDev:28). Naming the
// NIC's mlx5_0 (OSDev:18) instead links GPU1 to a NIC, which no NVLink reaches and NCCL's XML
// cannot say: the link is noted and dropped, so the export reads back to the same graph (the
// fuzzer found it).
TEST(Hwloc, NvlinkToANicIsNotedAndDropped) {
  if (!hwlocAvailable()) GTEST_SKIP() << "built without hwloc";
  std::string text = test::readFile(test::corpusPath("hwloc2_gpu_ib.xml"));
  System s;
  ASSERT_TRUE(parseHwlocXml(text, "gpu_ib.xml", &s).ok());
  EXPECT_GT(nvlinkCount(s, test::find(s, "GPU0"), test::find(s, "GPU1")), 0);
  const std::string row = "OSDev:14 OSDev:28";
  ASSERT_NE(text.find(row), std::string::npos);
  text.replace(text.find(row), row.size(), "OSDev:18 OSDev:28");
  Status st = parseHwlocXml(text, "gpu_ib.xml", &s);
  ASSERT_TRUE(st.ok()) << st.message();
  for (const Link& link : s.links)
    EXPECT_NE(link.kind, LinkKind::kNvlink) << s.nodes[link.a].name << " " << s.nodes[link.b].name;
  EXPECT_TRUE(std::any_of(s.notes.begin(), s.notes.end(), [](const std::string& n) {
    return n.find(
               "links the GPU at 0000:81:00.0 to the device at 0000:03:00.0, which is no GPU, "
               "CPU or NVSwitch; ignored") != std::string::npos;
  })) << ::testing::PrintToString(s.notes);
  System back;
  ASSERT_TRUE(parseNcclXml(writeNcclXml(s), "export", &back).ok());
  EXPECT_EQ(canonicalForm(back), canonicalForm(s));
}

TEST(Hwloc, LoaderErrorsNameTheFile) {
  System s;
  // Well-formed for Weft's own checks, but an object type hwloc does not know.
  Status st = parseTopologyText(
      "<topology version=\"2.0\"><object type=\"Machine\" os_index=\"0\" cpuset=\"0x1\" "
      "complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\"><object "
      "type=\"Bogus\"/></object></topology>",
      "broken.hwloc.xml", &s);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("broken.hwloc.xml"), std::string::npos);
  if (!hwlocAvailable()) {
    EXPECT_NE(st.message().find("no hwloc support"), std::string::npos);
    GTEST_SKIP() << "built without hwloc: hwloc XML files cannot be loaded";
  }
  EXPECT_NE(st.message().find("could not load"), std::string::npos);
}

}  // namespace
}  // namespace weft::topo
