// The collectives weft-perf measures: names, buffer layout per size and bandwidth formulas,
// all as nccl-tests defines them so the numbers compare.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace weft::perf {

enum class Coll {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kAllToAll,
  kSendRecv,
  kSend  // ranks pair up, 0 -> 1, 2 -> 3, ...: one direction only, as OSU's osu_bw
};

// What a rank does in `send`: send to partner, receive from it, or (the last of an odd count)
// nothing.
enum class SendRole { kSender, kReceiver, kIdle };
SendRole sendRole(int rank, int nranks);

// "all_reduce", or the nccl-tests binary name "all_reduce_perf" (also "alltoall").
std::optional<Coll> collFromName(std::string_view name);
const char* collName(Coll coll);
// Every collective's name, for help and error messages.
std::string collNames();

bool collHasOp(Coll coll);    // takes a reduction operation
bool collHasRoot(Coll coll);  // takes a root rank
// In place, sendrecv and send pass each rank's buffer on while it is overwritten, so nothing
// there can be checked: their in-place #wrong reads N/A, as nccl-tests' sendrecv does.
// (weftAllToAll runs in place from a copy of its input, and is checked.)
bool collChecksInPlace(Coll coll);

// Element counts of one call for a test size of `count` elements (size / type size), as
// nccl-tests' getCollByteCount: paramCount goes to the API call; in place, a rank's input and
// output start at rank * the offsets inside the receive buffer.
struct CollCounts {
  size_t sendCount = 0;
  size_t recvCount = 0;
  size_t paramCount = 0;
  size_t sendInplaceOffset = 0;
  size_t recvInplaceOffset = 0;
};
CollCounts collCounts(Coll coll, size_t count, int nranks);

// The "size" column: the larger of the send and receive buffers, in bytes.
size_t reportedBytes(const CollCounts& counts, size_t typeSize);

// busbw = algbw * factor: what each rank's links carry relative to algbw, so that busbw
// compares with the hardware's peak bandwidth whatever the rank count.
double busBwFactor(Coll coll, int nranks);

struct Bandwidth {
  double algBw = 0;  // GB/s, 1e9 bytes
  double busBw = 0;
};
Bandwidth bandwidth(Coll coll, size_t paramCount, size_t typeSize, double seconds, int nranks);

}  // namespace weft::perf
