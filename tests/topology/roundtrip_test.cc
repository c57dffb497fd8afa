// Export then import gives the same graph, for every file; the other exports are well formed.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/topology/test_util.h"
#include "topology/export_dot.h"
#include "topology/export_json.h"
#include "topology/hwloc_xml_reader.h"
#include "topology/load.h"
#include "topology/nccl_xml_reader.h"
#include "topology/nccl_xml_writer.h"

namespace weft::topo {
namespace {

class RoundTrip : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam().find(".hwloc.") != std::string::npos && !hwlocAvailable()) {
      GTEST_SKIP() << "built without hwloc";
    }
    system_ = test::load(GetParam());
  }
  System system_;
};

TEST_P(RoundTrip, NcclXmlReadsBackToTheSameGraph) {
  std::string xml = writeNcclXml(system_);
  System back;
  Status st = parseNcclXml(xml, "export", &back);
  ASSERT_TRUE(st.ok()) << st.message() << "\n" << xml;
  EXPECT_EQ(canonicalForm(back), canonicalForm(system_));
  // And again: the export of the import is the same text.
  EXPECT_EQ(writeNcclXml(back).size(), xml.size());
}

TEST_P(RoundTrip, NcclXmlThroughAFile) {
  test::TempDir dir;
  std::string path = dir.file("export.xml", writeNcclXml(system_));
  System back;
  ASSERT_TRUE(loadTopologyFile(path, &back).ok());
  EXPECT_EQ(canonicalForm(back), canonicalForm(system_));
  EXPECT_EQ(back.format, "NCCL topology XML");
}

TEST_P(RoundTrip, JsonAndDotAreWellFormed) {
  nlohmann::json j = nlohmann::json::parse(writeJson(system_));
  EXPECT_EQ(j["nodes"].size(), system_.nodes.size());
  EXPECT_EQ(j["links"].size(), system_.links.size());
  EXPECT_EQ(j["counts"]["gpus"], system_.count(NodeKind::kGpu));
  // GPUs and NICs; without a GPU also the endpoints of unknown kind.
  int unknown = system_.count(NodeKind::kGpu) == 0 ? system_.count(NodeKind::kPciDevice) : 0;
  EXPECT_EQ(
      j["matrix"]["devices"].size(),
      static_cast<size_t>(system_.count(NodeKind::kGpu) + system_.count(NodeKind::kNic) + unknown));
  EXPECT_EQ(j["matrix"].contains("note"), system_.count(NodeKind::kGpu) == 0);
  std::string dot = writeDot(system_);
  EXPECT_EQ(dot.rfind("graph topology {", 0), 0u);
  EXPECT_EQ(dot.substr(dot.size() - 2), "}\n");
  // An edge per link, but for a NIC's links to its ports: the ports are drawn as part of it.
  size_t edges = 0, pos = 0, ports = 0;
  while ((pos = dot.find(" -- ", pos)) != std::string::npos)
    ++edges, ++pos;
  for (int net : system_.nodesOf(NodeKind::kNet))
    ports += system_.nodes[net].links.size();
  EXPECT_EQ(edges + ports, system_.links.size());
  // Multi-line labels use DOT's \n line break, escaped once: a "\\n" would be drawn as a
  // backslash and an n.
  EXPECT_EQ(dot.find("\\\\n"), std::string::npos);
  for (int g : system_.gpus()) {
    const Node& n = system_.nodes[g];
    if (n.pci.busId.empty()) continue;
    EXPECT_NE(dot.find("[label=\"" + n.name + "\\n" + n.pci.busId), std::string::npos)
        << n.name << "\n"
        << dot;
  }
  // No raw newline inside a quoted string.
  bool quoted = false;
  for (size_t i = 0; i < dot.size(); ++i) {
    if (quoted && dot[i] == '\\') {
      ++i;
    } else if (dot[i] == '"') {
      quoted = !quoted;
    } else {
      EXPECT_FALSE(quoted && dot[i] == '\n') << "at byte " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Data, RoundTrip, ::testing::ValuesIn(test::dataFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

TEST(RoundTripDetail, KeepsWhatNcclReads) {
  System s = test::load("alibaba-hgx-a100x8-cx6bond200x4.nccl.xml");
  std::string xml = writeNcclXml(s);
  // The NVSwitch chips keep their bus ids and each GPU its 2 links to each.
  EXPECT_NE(xml.find("<nvlink target=\"0000:c3:00.0\" count=\"2\" tclass=\"0x068000\"/>"),
            std::string::npos);
  EXPECT_NE(xml.find("<net name=\"mlx5_bond_1\" dev=\"1\" speed=\"200000\" port=\"1\" "
                     "latency=\"0.000000\" guid=\"0x4280b50003fd7010\" maxconn=\"262144\" "
                     "gdr=\"1\"/>"),
            std::string::npos);
  EXPECT_NE(xml.find("affinity=\"ffffffff,00000000,ffffffff\""), std::string::npos);
}

}  // namespace
}  // namespace weft::topo
