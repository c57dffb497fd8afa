// Call stamps and slot signatures: what ranks must agree on, and how a disagreement is told.
#include "collectives/call_stamp.h"

#include <gtest/gtest.h>

#include <string>

namespace weft {
namespace {

MessageHeader headerOf(const CallStamp& stamp, uint16_t flags = 0) {
  MessageHeader h{};
  h.call = stamp;
  h.flags = flags;
  return h;
}

TEST(CallStamp, FieldsACollectiveIgnoresAreLeftOut) {
  // An all-gather has no operator and no root; a broadcast has no operator.
  EXPECT_EQ(stampOf({CollKind::kAllGather, 10, weftInt32, weftSum, 0}, 3),
            stampOf({CollKind::kAllGather, 10, weftInt32, weftMax, 2}, 3));
  EXPECT_EQ(stampOf({CollKind::kBroadcast, 10, weftInt32, weftSum, 1}, 3),
            stampOf({CollKind::kBroadcast, 10, weftInt32, weftMin, 1}, 3));
  EXPECT_EQ(stampOf({CollKind::kAllToAllv, 10, weftInt32, weftSum, 0}, 3),
            stampOf({CollKind::kAllToAllv, 99, weftInt32, weftSum, 0}, 3));
  // What they take counts.
  EXPECT_NE(stampOf({CollKind::kBroadcast, 10, weftInt32, weftSum, 1}, 3),
            stampOf({CollKind::kBroadcast, 10, weftInt32, weftSum, 0}, 3));
  EXPECT_NE(stampOf({CollKind::kAllReduce, 10, weftInt32, weftSum, 0}, 3),
            stampOf({CollKind::kAllReduce, 10, weftInt32, weftMax, 0}, 3));
  EXPECT_NE(stampOf({CollKind::kAllReduce, 10, weftInt32, weftSum, 0}, 3),
            stampOf({CollKind::kAllReduce, 10, weftFloat32, weftSum, 0}, 3));
  EXPECT_NE(stampOf({CollKind::kAllReduce, 10, weftInt32, weftSum, 0}, 3),
            stampOf({CollKind::kAllReduce, 10, weftInt32, weftSum, 0}, 4));
  // No collective's stamp is a point-to-point message's (all zero).
  EXPECT_NE(stampOf({CollKind::kBarrier, 0, weftInt8, weftSum, 0}, 0), CallStamp{});
}

TEST(CallStamp, DescribesTheCall) {
  EXPECT_EQ(describeCall(stampOf({CollKind::kAllReduce, 1000, weftFloat32, weftSum, 0}, 12), 0),
            "all_reduce #12 (1000 x float32 sum)");
  EXPECT_EQ(describeCall(stampOf({CollKind::kBroadcast, 8, weftInt32, weftSum, 3}, 0), 0),
            "broadcast #0 (8 x int32, root 3)");
  EXPECT_EQ(describeCall(stampOf({CollKind::kReduce, 8, weftBfloat16, weftAvg, 1}, 2), 0),
            "reduce #2 (8 x bfloat16 avg, root 1)");
  EXPECT_EQ(describeCall(stampOf({CollKind::kBarrier, 5, weftFloat32, weftMax, 2}, 4), 0),
            "barrier #4");
  EXPECT_EQ(describeCall(CallStamp{}, kPointToPointMessage), "send");
  EXPECT_EQ(describeCall(CallStamp{}, 0), "an unknown call");
}

TEST(CallStamp, AMismatchNamesBothCallsAndWhatDiffers) {
  const CallStamp theirs = stampOf({CollKind::kAllReduce, 100, weftFloat32, weftSum, 0}, 5);
  const CallStamp ours = stampOf({CollKind::kAllReduce, 100, weftInt32, weftSum, 0}, 5);
  Status s = callMismatch(1, headerOf(theirs), 0, ours, 0);
  EXPECT_EQ(s.code(), weftInvalidUsage);
  EXPECT_NE(s.message().find("rank 1 called all_reduce #5 (100 x float32 sum) where rank 0 "
                             "called all_reduce #5 (100 x int32 sum) (they differ in type)"),
            std::string::npos)
      << s.message();

  const CallStamp gather = stampOf({CollKind::kAllGather, 50, weftInt32, weftSum, 0}, 6);
  s = callMismatch(2, headerOf(gather), 0, ours, 0);
  EXPECT_NE(s.message().find("(they differ in collective, count, call number)"), std::string::npos)
      << s.message();

  // A send met by a collective's receive, and a collective's message met by a receive.
  s = callMismatch(1, headerOf(CallStamp{}, kPointToPointMessage), 0, ours, 0);
  EXPECT_NE(s.message().find("rank 1 called send where rank 0 called all_reduce #5"),
            std::string::npos)
      << s.message();
  s = callMismatch(1, headerOf(ours), 0, CallStamp{}, kPointToPointMessage);
  EXPECT_NE(s.message().find("rank 1 called all_reduce #5 (100 x int32 sum) where rank 0 "
                             "called recv:"),
            std::string::npos)
      << s.message();
}

TEST(SlotSignature, KeepsTheFieldsAndThePath) {
  const CallSpec bcast{CollKind::kBroadcast, 16, weftInt32, weftSum, 1};
  const uint64_t direct = slotSignature(bcast, SlotPath::kDirect);
  EXPECT_NE(direct, slotSignature(bcast, SlotPath::kStaged));
  EXPECT_NE(direct,
            slotSignature({CollKind::kBroadcast, 16, weftInt32, weftSum, 0}, SlotPath::kDirect));
  EXPECT_NE(direct,
            slotSignature({CollKind::kBroadcast, 17, weftInt32, weftSum, 1}, SlotPath::kDirect));
  // Counts past 32 bits still count.
  EXPECT_NE(slotSignature({CollKind::kAllReduce, size_t{1} << 33, weftInt8, weftSum, 0},
                          SlotPath::kStaged),
            slotSignature({CollKind::kAllReduce, 0, weftInt8, weftSum, 0}, SlotPath::kStaged));

  Status s = slotMismatch(
      0, direct, 1,
      slotSignature({CollKind::kBroadcast, 16, weftInt32, weftSum, 0}, SlotPath::kDirect));
  EXPECT_EQ(s.code(), weftInvalidUsage);
  EXPECT_NE(s.message().find("rank 0 called broadcast (16 x int32, root 1) where rank 1 called "
                             "broadcast (16 x int32, root 0) (they differ in root)"),
            std::string::npos)
      << s.message();
  s = slotMismatch(0, direct, 1, slotSignature(bcast, SlotPath::kStaged));
  EXPECT_NE(s.message().find("they differ in path: WEFT_DIRECT_BYTES"), std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace weft
