// Validation: a deterministic input generator and a plain-loop reference of each collective.
//
// Inputs are small integers, so sums, products, minima and maxima are exact in every type
// (floating point included) whatever order the library reduces in; only avg may round.
#pragma once

#include <cstddef>
#include <cstdint>

#include "perf/weft_perf/coll.h"
#include "weft/weft.h"

namespace weft::perf {

struct CheckSpec {
  Coll coll;
  weftDataType_t type;
  weftRedOp_t op;  // ignored by collectives that do not reduce
  int nranks;
  int root;
  uint64_t seed;  // changes per measurement, so a stale result from the last one is caught
};

// Input element `index` of `rank`, before conversion to the data type.
int64_t inputValue(const CheckSpec& spec, int rank, size_t index);

// Writes rank's input elements [0, count) into buf.
void fillInput(const CheckSpec& spec, int rank, void* buf, size_t count);

// A byte pattern for the output buffer, so an element the library never wrote is caught:
// NaN for floating point, 0xA5 bytes for integers.
void fillPoison(weftDataType_t type, void* buf, size_t bytes);

// How many output elements `rank` checks (0 for non-root ranks of reduce), and their values.
size_t expectedCount(const CheckSpec& spec, int rank, const CollCounts& counts);
void fillExpected(const CheckSpec& spec, int rank, const CollCounts& counts, void* expected);

// Elements of got that differ from expected: exactly, except where floating point may round
// (avg): there within a relative tolerance of the type's epsilon times (nranks + 1).
int64_t countWrong(const CheckSpec& spec, const void* got, const void* expected, size_t count);

// Elements a call had to leave alone but changed, of `rank`'s buffers: an out-of-place call's
// input, and the output of a rank that receives nothing (a reduce's leaves, send's senders),
// which must keep its poison. In place, the output holds the input: countWrong covers it.
int64_t countDisturbed(const CheckSpec& spec, int rank, const CollCounts& counts, const void* input,
                       const void* output, bool inPlace);

}  // namespace weft::perf
