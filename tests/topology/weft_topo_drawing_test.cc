// weft-topo's drawings: --dot, and --png, which renders the same text with Graphviz.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <regex>

#include "tests/topology/test_util.h"
#include "tests/topology/weft_topo_runner.h"
#include "tools/weft_topo/png.h"
#include "topology/sysfs.h"

namespace weft::topo {
namespace {

using test::Result;
using test::weftTopo;

// How many times `re` matches in `text`.
size_t matches(const std::string& text, const std::string& re) {
  std::regex r(re);
  return static_cast<size_t>(
      std::distance(std::sregex_iterator(text.begin(), text.end(), r), std::sregex_iterator()));
}

// The values of attribute `attr` of the elements `element` of an XML text, in order.
std::vector<std::string> xmlValues(const std::string& xml, const std::string& element,
                                   const std::string& attr) {
  std::vector<std::string> out;
  std::regex r("<" + element + " [^>]*" + attr + "=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(xml.begin(), xml.end(), r); it != std::sregex_iterator();
       ++it)
    out.push_back((*it)[1]);
  return out;
}

// The DOT id ("n12") of the node whose label starts with the line `first`; "" when none.
std::string nodeLabelled(const std::string& dot, const std::string& first) {
  std::smatch m;
  if (!std::regex_search(dot, m, std::regex("(n[0-9]+) \\[label=\"" + first + "(\\\\n|\")")))
    return "";
  return m[1];
}

// A stand-in `dot` in `dir`/bin that writes what it is given to its -o file, so that a test sees
// the text --png renders (whether or not Graphviz is installed).
std::string fakeDotPath(const test::TempDir& dir) {
  std::string fake = dir.file("bin/dot", "#!/bin/sh\nout=\"${2#-o}\"\ncat > \"$out\"\n");
  chmod(fake.c_str(), 0755);
  return "PATH=" + dir.path() + "/bin:/usr/bin:/bin";
}

// The width in pixels a PNG file's header gives (0 when it is not a PNG).
uint32_t pngWidth(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::array<unsigned char, 24> h{};
  in.read(reinterpret_cast<char*>(h.data()), h.size());
  if (!in || h[1] != 'P' || h[2] != 'N' || h[3] != 'G') return 0;
  return (uint32_t{h[16]} << 24) | (uint32_t{h[17]} << 16) | (uint32_t{h[18]} << 8) | h[19];
}

// --rings draws the rings over the system; --png renders the same text as --dot, so it shows them
// too. Without --rings nothing is drawn as a ring.
TEST(WeftTopoDrawing, RingsAreDrawn) {
  std::string file = test::dataPath("alibaba-hgx-a100x8-cx6bond200x4.nccl.xml");
  Result plain = weftTopo("--topo " + file + " --dot");
  Result rings = weftTopo("--topo " + file + " --dot --rings 8");
  ASSERT_EQ(plain.code, 0) << plain.out;
  ASSERT_EQ(rings.code, 0) << rings.out;
  EXPECT_EQ(plain.out.find("ring"), std::string::npos) << plain.out;
  // Each GPU of the file (its <gpu> elements) has a ring's arrow leaving it and one reaching it.
  size_t gpus = xmlValues(test::readFile(file), "gpu", "dev").size();
  ASSERT_EQ(gpus, 8u);
  for (size_t g = 0; g < gpus; ++g) {
    std::string id = nodeLabelled(rings.out, "GPU" + std::to_string(g));
    ASSERT_FALSE(id.empty()) << g << rings.out;
    EXPECT_EQ(matches(rings.out, id + " -- n[0-9]+ \\[[^\\]]*label=\"rings? "), 1u) << id;
    EXPECT_EQ(matches(rings.out, "n[0-9]+ -- " + id + " \\[[^\\]]*label=\"rings? "), 1u) << id;
  }
  // What --png hands to dot, seen through a stand-in that keeps it.
  test::TempDir dir;
  auto rendered = [&](const std::string& args) {
    std::string png = dir.path() + "/drawn.png";
    Result r = weftTopo("--topo " + file + args + " --png " + png, fakeDotPath(dir));
    EXPECT_EQ(r.code, 0) << r.out;
    return test::readFile(png);
  };
  EXPECT_EQ(rendered(""), plain.out);
  EXPECT_EQ(rendered(" --rings 8"), rings.out);
}

// A NIC is one node named as the source names it: HGX's five <net name=..> ports, and this
// machine's interfaces that have a PCI device.
TEST(WeftTopoDrawing, EachNicDrawnOnceByItsName) {
  std::string file = test::dataPath("alibaba-hgx-a100x8-cx6bond200x4.nccl.xml");
  std::vector<std::string> names = xmlValues(test::readFile(file), "net", "name");
  ASSERT_EQ(names.size(), 5u);
  Result r = weftTopo("--topo " + file + " --dot");
  ASSERT_EQ(r.code, 0) << r.out;
  for (const std::string& n : names) {
    EXPECT_EQ(matches(r.out, "\\[label=\"" + n + "(\\\\n|\")"), 1u) << n << r.out;
    EXPECT_EQ(matches(r.out, n), 1u) << n << r.out;
  }
  Result here = weftTopo("--dot", "env -u WEFT_TOPO_FILE");
  ASSERT_EQ(here.code, 0) << here.out;
  for (const SysfsNet& n : Sysfs().netInterfaces()) {
    if (n.busId.empty()) continue;
    EXPECT_EQ(matches(here.out, "\\[label=\"" + n.name + "(\\\\n|\")"), 1u) << n.name << here.out;
  }
}

// The 8-GPU HGX and DGX boxes fit a screen: one box per NUMA node (the file's <cpu> elements),
// and the PNG under 1,600 pixels wide, with the rings drawn or not.
TEST(WeftTopoDrawing, EightGpuBoxesFitAScreen) {
  const char* files[] = {
      "alibaba-hgx-a100x8-cx6bond200x4.nccl.xml", "aws-p4d.24xlarge-a100x8-efa4.nccl.xml",
      "aws-p5.48xlarge-h100x8-efa32.nccl.xml",    "azure-ndv2-v100x8-edr1.nccl.xml",
      "azure-ndv4-a100x8-hdr200x8.nccl.xml",      "azure-ndv5-h100x8-ndr400x8.nccl.xml",
      "nvidia-dgx1-v100-4xedr.nvsmi.txt"};
  for (const char* f : files) {
    std::string file = test::dataPath(f);
    Result dot = weftTopo("--topo " + file + " --dot");
    ASSERT_EQ(dot.code, 0) << f << dot.out;
    if (file.size() > 4 && file.substr(file.size() - 4) == ".xml") {
      size_t numa = xmlValues(test::readFile(file), "cpu", "numaid").size();
      EXPECT_EQ(matches(dot.out, "subgraph cluster_"), numa) << f;
    }
  }
  if (topotool::findDot().empty()) {
    GTEST_SKIP() << "Graphviz's dot is not installed (scripts/install-deps.sh installs it): the "
                    "NUMA boxes are checked, the width of the PNG is not";
  }
  test::TempDir dir;
  for (const char* f : files) {
    for (const char* rings : {"", " --rings 8"}) {
      std::string png = dir.path() + "/" + f + ".png";
      Result r = weftTopo("--topo " + test::dataPath(f) + rings + " --png " + png);
      ASSERT_EQ(r.code, 0) << f << rings << r.out;
      uint32_t width = pngWidth(png);
      EXPECT_GT(width, 0u) << f << rings;
      EXPECT_LT(width, 1600u) << f << rings;
    }
  }
}

// --dot labels break lines with DOT's \n (once escaped); with Graphviz installed, the drawing
// renders and each label line is its own text line.
TEST(WeftTopoDrawing, DotLabelsBreakLines) {
  std::string file = test::dataPath("aws-p4d.24xlarge-a100x8-efa4.nccl.xml");
  Result dot = weftTopo("--topo " + file + " --dot");
  ASSERT_EQ(dot.code, 0) << dot.out;
  EXPECT_NE(dot.out.find("[label=\"GPU0\\n0000:10:1c.0\""), std::string::npos) << dot.out;
  EXPECT_NE(dot.out.find("[label=\"CPU0\\nCPUs 0-23,48-71\""), std::string::npos) << dot.out;
  EXPECT_EQ(dot.out.find("\\\\n"), std::string::npos) << dot.out;
  if (topotool::findDot().empty()) {
    GTEST_SKIP() << "Graphviz's dot is not installed: the DOT text is checked, the rendering "
                    "(--png) is not";
  }
  test::TempDir dir;
  std::string png = dir.path() + "/p4d.png";
  Result r = weftTopo("--topo " + file + " --png " + png);
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream in(png, std::ios::binary);
  std::string magic(8, '\0');
  in.read(magic.data(), 8);
  EXPECT_EQ(magic, "\x89PNG\r\n\x1a\n");
  // Rendered as SVG, GPU0's label is two text lines, with no backslash left.
  std::string dotFile = dir.file("p4d.dot", dot.out);
  FILE* p = popen((topotool::findDot() + " -Tsvg " + dotFile).c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string svg;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0)
    svg.append(buf.data(), n);
  pclose(p);
  EXPECT_NE(svg.find(">GPU0</text>"), std::string::npos);
  EXPECT_NE(svg.find(">0000:10:1c.0</text>"), std::string::npos);
  EXPECT_EQ(svg.find("GPU0\\n"), std::string::npos);
}

TEST(WeftTopoDrawing, PngNeedsGraphviz) {
  test::TempDir dir;
  std::string png = dir.path() + "/t.png";
  Result r = weftTopo("--topo " + test::dataPath("aws-p4d.24xlarge-a100x8-efa4.nccl.xml") +
                      " --png " + png);
  if (topotool::findDot().empty()) {
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.out.find("Graphviz"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("not installed"), std::string::npos) << r.out;
  } else {
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_TRUE(access(png.c_str(), F_OK) == 0);
  }
  // A stand-in dot on PATH: weft-topo hands it the drawing and the output file.
  std::string drawn = dir.path() + "/drawn.png";
  Result ok = weftTopo(
      "--topo " + test::dataPath("aws-p4d.24xlarge-a100x8-efa4.nccl.xml") + " --png " + drawn,
      fakeDotPath(dir));
  EXPECT_EQ(ok.code, 0) << ok.out;
  EXPECT_NE(ok.out.find("Drawing written to " + drawn), std::string::npos) << ok.out;
  std::ifstream in(drawn);
  std::string first;
  std::getline(in, first);
  EXPECT_EQ(first, "graph topology {");
  // With an empty PATH dot is never found, whatever is installed.
  Result none = weftTopo(
      "--topo " + test::dataPath("aws-p4d.24xlarge-a100x8-efa4.nccl.xml") + " --png " + png,
      "PATH=/nonexistent");
  EXPECT_EQ(none.code, 1);
  EXPECT_NE(none.out.find("--png needs Graphviz's `dot`"), std::string::npos) << none.out;
}

}  // namespace
}  // namespace weft::topo
