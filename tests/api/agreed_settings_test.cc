// The check of the ranks' settings against rank 0's (src/comm/agreed_settings.h), on blobs made
// here: what it accepts, and what its messages name.
#include "src/comm/agreed_settings.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace weft {
namespace {

TEST(AgreedSettings, EqualSettingsAgree) {
  CommConfig c;
  c.algo = "ring";
  EXPECT_TRUE(checkSettingsAgree({encodeSettings(c), encodeSettings(c), encodeSettings(c)}).ok());
  EXPECT_TRUE(checkSettingsAgree({encodeSettings(c)}).ok());
}

TEST(AgreedSettings, SettingsThatLeaveTheExchangeAloneNeedNotAgree) {
  CommConfig a;
  CommConfig b;
  b.timeoutMs = a.timeoutMs + 1000;
  b.socketPaceBytes = a.socketPaceBytes + 1;
  b.shmStageStores = "streamed";
  b.name = "other";
  EXPECT_TRUE(checkSettingsAgree({encodeSettings(a), encodeSettings(b)}).ok());
}

TEST(AgreedSettings, ADifferenceNamesTheSettingTheRankAndBothValues) {
  CommConfig a;
  a.chunkBytes = 1 << 20;
  CommConfig b = a;
  b.chunkBytes = 2 << 20;
  Status s = checkSettingsAgree({encodeSettings(a), encodeSettings(a), encodeSettings(b)});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), weftInvalidUsage);
  const std::string expected =
      "WEFT_CHUNK_BYTES differs between ranks: rank 0 has '1048576', rank 2 has '2097152'";
  EXPECT_NE(s.message().find(expected), std::string::npos) << s.message();
}

TEST(AgreedSettings, EverySettingIsCompared) {
  const CommConfig base;
  const size_t n = agreedSettings(base).size();
  for (size_t i = 0; i < n; ++i) {
    // A config that differs from base in setting i alone, made by hand per field.
    CommConfig c = base;
    const std::string name = agreedSettings(base)[i].first;
    if (name.starts_with("WEFT_TRANSPORT")) c.transport = "tcp";
    if (name == "WEFT_NET") c.net = "ucx";
    if (name.starts_with("WEFT_NSOCKS_PERPEER")) c.nSocketsPerPeer = 7;
    if (name == "WEFT_ALGO") c.algo = "tree";
    if (name == "WEFT_CHUNK_BYTES") c.chunkBytes = 12345;
    if (name == "WEFT_HIERARCHY") c.hierarchy = "on";
    if (name == "WEFT_CALIBRATE") c.calibrate = !base.calibrate;
    if (name == "WEFT_DIRECT_BYTES") c.directBytes = 12345;
    if (name == "WEFT_SHM_SINGLE_COPY") c.shmSingleCopy = "always";
    if (name == "WEFT_SHM_SINGLE_COPY_COLLS") c.shmSingleCopyColls = "broadcast";
    if (name == "WEFT_SHM_SINGLE_COPY_BYTES") c.shmSingleCopyBytes = 12345;
    if (name == "WEFT_SHM_SINGLE_COPY_MAX_BYTES") c.shmSingleCopyMaxBytes = 12345;
    if (name == "WEFT_SHM_SINGLE_COPY_MAX_RANKS") c.shmSingleCopyMaxRanks = 7;
    Status s = checkSettingsAgree({encodeSettings(base), encodeSettings(c)});
    ASSERT_FALSE(s.ok()) << name << " was not changed or not compared";
    EXPECT_EQ(s.message().find(name + " differs"), 0u) << s.message();
  }
}

TEST(AgreedSettings, AnotherListOfSettingsIsAnotherVersion) {
  CommConfig c;
  Blob shorter = encodeSettings(c);
  const std::string text(shorter.begin(), shorter.end());
  shorter.resize(text.find('\n') + 1);  // the first setting alone
  Status s = checkSettingsAgree({encodeSettings(c), shorter});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("Weft versions"), std::string::npos) << s.message();
  Blob renamed = encodeSettings(c);
  renamed[0] = 'X';
  s = checkSettingsAgree({encodeSettings(c), renamed});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("Weft versions"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace weft
