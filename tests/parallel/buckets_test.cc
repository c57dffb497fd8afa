// BucketLayout and BucketReadiness, worked through by hand on small layouts.
#include "weft/parallel/buckets.hpp"

#include <gtest/gtest.h>

#include "weft/weft.hpp"

namespace weft::parallel {
namespace {

TEST(BucketLayout, LastParameterFirstBucketsCappedAndPaddedToTheMultiple) {
  // Cap 10 floats, slices of 4: parameter 2 (10) fills bucket 0, padded to 12; parameters 1 (3)
  // and 0 (5) share bucket 1 of 8.
  BucketLayout l({5, 3, 10}, 4, 40, 4);
  EXPECT_EQ(l.offsets, (std::vector<size_t>{15, 12, 0}));
  EXPECT_EQ(l.bucketOf, (std::vector<size_t>{1, 1, 0}));
  ASSERT_EQ(l.buckets.size(), 2u);
  EXPECT_EQ(l.buckets[0].first, 0u);
  EXPECT_EQ(l.buckets[0].elements, 12u);
  EXPECT_EQ(l.buckets[1].first, 12u);
  EXPECT_EQ(l.buckets[1].elements, 8u);
  EXPECT_EQ(l.total, 20u);
  // A parameter over the cap is a bucket of its own.
  BucketLayout big({100, 2}, 4, 40, 1);
  EXPECT_EQ(big.buckets.size(), 2u);
  EXPECT_EQ(big.buckets[1].elements, 100u);
}

TEST(BucketLayout, BucketsNeverSpanTwoUnits) {
  BucketLayout l({4, 4, 4, 4}, 4, 1 << 20, 1, {0, 0, 1, 1});
  ASSERT_EQ(l.buckets.size(), 2u);
  EXPECT_EQ(l.buckets[0].unit, 1u);  // last first: parameters 3 and 2
  EXPECT_EQ(l.buckets[1].unit, 0u);
  EXPECT_EQ(l.bucketOf, (std::vector<size_t>{1, 1, 0, 0}));
  EXPECT_THROW(BucketLayout({4, 4}, 4, 64, 1, {0, 2}), Error);
  EXPECT_THROW(BucketLayout({4, 4}, 4, 64, 1, {1, 1}), Error);
  EXPECT_THROW(BucketLayout({4, 4}, 4, 64, 1, {0}), Error);
}

TEST(BucketLayout, BadArgumentsAreErrors) {
  EXPECT_THROW(BucketLayout({}, 4, 40, 1), Error);
  EXPECT_THROW(BucketLayout({1, 0}, 4, 40, 1), Error);
  EXPECT_THROW(BucketLayout({1}, 4, 0, 1), Error);
  EXPECT_THROW(BucketLayout({1}, 4, 40, 0), Error);
}

TEST(BucketReadiness, BucketsStartInOrderOnly) {
  BucketLayout l({5, 3, 10}, 4, 40, 4);
  BucketReadiness r(l);
  EXPECT_TRUE(r.markReady(0).empty());
  EXPECT_TRUE(r.markReady(1).empty());  // bucket 1 is complete, but bucket 0 is not
  EXPECT_EQ(r.markReady(2), (std::vector<size_t>{0, 1}));
  EXPECT_EQ(r.endStep(), "");
  EXPECT_EQ(r.markReady(2), (std::vector<size_t>{0}));
  EXPECT_THROW(r.markReady(2), Error);
  EXPECT_THROW(r.markReady(3), Error);
  EXPECT_EQ(r.endStep(), "0, 1");
  EXPECT_EQ(r.markReady(2), (std::vector<size_t>{0}));  // a fresh step
}

}  // namespace
}  // namespace weft::parallel
