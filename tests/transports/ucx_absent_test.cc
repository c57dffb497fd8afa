// Stands in for the UCX transport's tests where Weft is built without UCX, so the suite says so.
#include <gtest/gtest.h>

TEST(UcxTransport, NotBuilt) {
  GTEST_SKIP() << "Weft was built without UCX (install libucx-dev, or WEFT_ENABLE_UCX=OFF was set)";
}
