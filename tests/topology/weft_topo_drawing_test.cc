// weft-topo's drawings: --dot, and --png, which renders the same text with Graphviz.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>

#include "tests/topology/test_util.h"
#include "tests/topology/weft_topo_runner.h"
#include "tools/weft_topo/png.h"

namespace weft::topo {
namespace {

using test::Result;
using test::weftTopo;

// A stand-in `dot` in `dir`/bin that writes what it is given to its -o file, so that a test sees
// the text --png renders (whether or not Graphviz is installed).
std::string fakeDotPath(const test::TempDir& dir) {
  std::string fake = dir.file("bin/dot", "#!/bin/sh\nout=\"${2#-o}\"\ncat > \"$out\"\n");
  chmod(fake.c_str(), 0755);
  return "PATH=" + dir.path() + "/bin:/usr/bin:/bin";
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
