// hwloc's loader behind the trial load in a child: a file that crashes hwloc 2.9 gives an error
// in the caller, which lives on. Only built with hwloc.
#include <gtest/gtest.h>
#include <hwloc.h>

#include "tests/topology/test_util.h"
#include "topology/hwloc_xml_load.h"

namespace weft::topo {
namespace {

std::string seedText() {
  return test::readFile(test::corpusPath("hwloc2_gpu_ib.xml"));
}

TEST(HwlocLoad, ACrashInHwlocBecomesAnErrorNamingTheSignal) {
  // A bitmap that starts with a comma trips an assertion in hwloc 2.9's parser. Weft's checks
  // refuse it before hwloc sees it; here it goes straight to the guard, which must survive it.
  std::string text = seedText();
  const std::string from = "complete_cpuset=\"0x00000001\"";
  size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, from.size(), "complete_cpuset=\",0x00000001\"");
  Status st = checkHwlocSurvivesXml(text, "comma.xml");
  ASSERT_FALSE(st.ok()) << "hwloc " << HWLOC_API_VERSION << " loads this file: the guard has "
                        << "nothing to catch here";
  EXPECT_EQ(st.code(), weftInvalidArgument);
  EXPECT_NE(st.message().find("comma.xml: hwloc"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("crashed loading this XML topology"), std::string::npos);
  EXPECT_NE(st.message().find("signal 6"), std::string::npos) << st.message();
}

TEST(HwlocLoad, FilesHwlocLoadsOrRefusesPassTheGuard) {
  const std::string good = seedText();
  EXPECT_TRUE(checkHwlocSurvivesXml(good, "good.xml").ok());
  hwloc_topology_t topo = loadHwlocXml(good);
  ASSERT_NE(topo, nullptr);
  EXPECT_GT(hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU), 0);
  hwloc_topology_destroy(topo);

  // Refused by hwloc without a crash: the guard passes it, and the caller's own load says no.
  const std::string truncated = good.substr(0, good.size() / 2);
  EXPECT_TRUE(checkHwlocSurvivesXml(truncated, "half.xml").ok());
  EXPECT_EQ(loadHwlocXml(truncated), nullptr);
}

}  // namespace
}  // namespace weft::topo
