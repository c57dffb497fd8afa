// The fuzz entry points, run in every build: over the data files and the seeds, then over a few
// thousand deterministic mutations of them, within a time bound. No crash, no sanitizer report,
// and every accepted input round-trips (the entry points abort otherwise).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <random>

#include "tests/topology/fuzz/fuzz_targets.h"
#include "tests/topology/fuzz/hwloc_leaks.h"
#include "tests/topology/test_util.h"
#include "topology/hwloc_xml_reader.h"
#include "topology/nccl_xml_reader.h"
#include "topology/nvsmi_reader.h"

namespace weft::topo {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kMutations = 3000;                 // per target
constexpr std::chrono::seconds kTimeBudget{15};  // both targets together

// The data files and seeds whose names end with `suffix` (and contain `part`).
std::vector<std::string> corpus(const std::string& suffix, const std::string& part = "") {
  std::vector<std::string> out;
  for (const std::string& dir :
       {std::string(WEFT_TOPO_DATA_DIR), std::string(WEFT_TOPO_CORPUS_DIR)}) {
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      std::string name = e.path().filename().string();
      if (name.size() < suffix.size() ||
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0 ||
          name.find(part) == std::string::npos) {
        continue;
      }
      out.push_back(test::readFile(e.path().string()));
    }
  }
  return out;
}

const std::vector<std::string> kXmlTokens = {
    "<pci busid=\"0000:01:00.0\" class=\"0x060400\">",
    "</pci>",
    "<pci busid=\"0000:02:00.0\"/>",
    "<gpu dev=\"0\" sm=\"80\" rank=\"0\" gdr=\"1\">",
    "</gpu>",
    "<nvlink target=\"0000:02:00.0\" count=\"2\" tclass=\"0x030200\"/>",
    "<nvlink target=\"0000:c0:00.0\" count=\"6\" tclass=\"0x068000\"/>",
    "<nvlink target=\"x\" count=\"1\" tclass=\"0x068001\"/>",
    "<nic><net name=\"a\" dev=\"0\"/></nic>",
    "<cpu numaid=\"1\">",
    "</cpu>",
    "numaid=\"-1\"",
    "class=\"0x020700\"",
    "class=\"0x030200\"",
    "link_width=\"999999999999\"",
    "link_speed=\"64 GT/s\"",
    "affinity=\"ffffffff,ffffffff\"",
    "hostbridge=\"hb\"",
    "<pcilink target=\"0000:01:00.0\"/>",
    "&amp;",
    "<!--",
    "-->",
    "\"",
    "<",
    ">",
    "/>"};
const std::vector<std::string> kHwlocTokens = {
    std::string("<object type=\"PCIDev\" gp_index=\"900\" pci_busid=\"0000:09:00.0\" ") +
        "pci_type=\"0302 [10de:20b0] [10de:134f] a1 00\" pci_link_speed=\"15.753846\">",
    "<object type=\"OSDev\" gp_index=\"901\" name=\"mlx5_9\" osdev_type=\"3\"/>",
    std::string("<object type=\"Bridge\" gp_index=\"902\" bridge_type=\"1-1\" depth=\"1\" ") +
        "bridge_pci=\"0000:[09-09]\" pci_busid=\"0000:00:09.0\" " +
        "pci_type=\"0604 [8086:0001] [0000:0000] 00 00\">",
    "</object>",
    "<info name=\"CPUModel\" value=\"x  \"/>",
    "complete_cpuset=\"0xffffffff\"",
    "nodeset=\"0x00000002\"",
    "osdev_type=\"48\"",
    "bridge_type=\"0-1\"",
    "pci_link_speed=\"1e300\"",
    "version=\"3.0\"",
    "<distances2hetero nbobjs=\"2\" kind=\"25\" name=\"NVLinkBandwidth\">",
    "\"",
    "<",
    "/>"};
const std::vector<std::string> kMatrixTokens = {"\t",
                                                " X ",
                                                "NV1",
                                                "NV12",
                                                "NV999",
                                                "PIX",
                                                "PXB",
                                                "PHB",
                                                "NODE",
                                                "SYS",
                                                "SOC",
                                                "GPU0",
                                                "GPU1",
                                                "GPU8",
                                                "NIC0",
                                                "mlx5_0",
                                                "\n",
                                                "CPU Affinity",
                                                "NUMA Affinity",
                                                "0-7",
                                                "N/A",
                                                "99999999",
                                                "NIC Legend:\n  NIC0: mlx5_9\n",
                                                "Legend:\n"};

std::string mutate(const std::string& in, const std::vector<std::string>& pool,
                   const std::vector<std::string>& tokens, std::mt19937_64& rng) {
  std::string s = in;
  int steps = 1 + static_cast<int>(rng() % 4);
  for (int k = 0; k < steps; ++k) {
    size_t pos = s.empty() ? 0 : rng() % (s.size() + 1);
    switch (rng() % 7) {
      case 0:  // flip a byte
        if (!s.empty()) s[pos % s.size()] = static_cast<char>(rng());
        break;
      case 1:  // delete a range
        if (!s.empty()) s.erase(pos % s.size(), 1 + rng() % 64);
        break;
      case 2:  // insert a token
        s.insert(pos, tokens[rng() % tokens.size()]);
        break;
      case 3: {  // duplicate a range
        if (s.empty()) break;
        size_t from = rng() % s.size();
        std::string chunk = s.substr(from, 1 + rng() % 200);
        s.insert(pos, chunk);
        break;
      }
      case 4:  // truncate
        s.resize(pos);
        break;
      case 5: {  // splice another input
        const std::string& other = pool[rng() % pool.size()];
        if (other.empty()) break;
        size_t from = rng() % other.size();
        s.insert(pos, other.substr(from, 1 + rng() % 300));
        break;
      }
      case 6:  // a digit somewhere becomes another
        for (size_t i = 0; i < s.size(); ++i) {
          size_t j = (pos + i) % s.size();
          if (isdigit(static_cast<unsigned char>(s[j]))) {
            s[j] = static_cast<char>('0' + rng() % 10);
            break;
          }
        }
        break;
    }
  }
  return s;
}

struct Stats {
  int runs = 0;
  int accepted = 0;
};

Stats fuzz(const std::vector<std::string>& pool, const std::vector<std::string>& tokens,
           int (*target)(const uint8_t*, size_t), bool (*accepts)(const std::string&),
           Clock::time_point deadline, uint64_t seed) {
  Stats st;
  std::mt19937_64 rng(seed);
  auto once = [&](const std::string& input) {
    target(reinterpret_cast<const uint8_t*>(input.data()), input.size());
    ++st.runs;
    st.accepted += accepts(input);
  };
  for (const std::string& c : pool)
    once(c);
  for (int i = 0; i < kMutations && Clock::now() < deadline; ++i) {
    once(mutate(pool[rng() % pool.size()], pool, tokens, rng));
  }
  return st;
}

bool ncclAccepts(const std::string& text) {
  System s;
  return parseNcclXml(text, "f", &s).ok();
}

bool nvsmiAccepts(const std::string& text) {
  System s;
  return parseNvsmiMatrix(text, "f", &s).ok();
}

bool hwlocAccepts(const std::string& text) {
  System s;
  return parseHwlocXml(text, "f", &s).ok();
}

TEST(TopologyFuzz, HwlocReaderSurvivesMutations) {
  if (!hwlocAvailable()) GTEST_SKIP() << "built without hwloc: hwloc XML is refused unread";
  fuzz::keepHwlocPluginsLoaded();
  std::vector<std::string> pool = corpus(".xml", "hwloc");
  ASSERT_GE(pool.size(), 5u);  // three data files, two seeds
  Stats st = fuzz(pool, kHwlocTokens, fuzz::hwlocXml, hwlocAccepts, Clock::now() + kTimeBudget / 3,
                  0x5eed3);
  printf("hwloc XML: %d inputs, %d accepted\n", st.runs, st.accepted);
  EXPECT_GE(st.accepted, static_cast<int>(pool.size()));
}

TEST(TopologyFuzz, ReadersSurviveMutations) {
  auto deadline = Clock::now() + kTimeBudget;
  std::vector<std::string> xml = corpus(".nccl.xml"), seedsXml = corpus(".xml");
  xml.insert(xml.end(), seedsXml.begin(), seedsXml.end());  // hwloc files too: wrong root, etc.
  std::vector<std::string> matrices = corpus(".txt");
  ASSERT_GE(xml.size(), 9u);
  ASSERT_GE(matrices.size(), 3u);
  Stats a =
      fuzz(xml, kXmlTokens, fuzz::ncclXml, ncclAccepts, Clock::now() + kTimeBudget / 2, 0x5eed1);
  Stats b = fuzz(matrices, kMatrixTokens, fuzz::nvsmiMatrix, nvsmiAccepts, deadline, 0x5eed2);
  // Also the other reader on each corpus, unmutated: refusals, not crashes.
  for (const std::string& m : matrices)
    fuzz::ncclXml(reinterpret_cast<const uint8_t*>(m.data()), m.size());
  for (const std::string& x : xml)
    fuzz::nvsmiMatrix(reinterpret_cast<const uint8_t*>(x.data()), x.size());
  RecordProperty("nccl_xml_runs", a.runs);
  RecordProperty("nvsmi_runs", b.runs);
  printf("NCCL XML: %d inputs, %d accepted; nvidia-smi: %d inputs, %d accepted\n", a.runs,
         a.accepted, b.runs, b.accepted);
  EXPECT_GT(a.accepted, static_cast<int>(xml.size()) / 2);  // mutations keep some valid files
  EXPECT_GT(b.accepted, 2);
  EXPECT_GT(a.runs, static_cast<int>(xml.size()));
}

}  // namespace
}  // namespace weft::topo
