// Test data and the reference the collectives are checked against, computed here independently
// of the library: inputs from a formula per (rank, index), decoded into double, reduced with
// plain loops, compared exactly for integers and within a stated tolerance for floats.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "weft/weft.h"

namespace weft::test {

constexpr weftDataType_t kAllTypes[] = {weftInt8,    weftUint8,   weftInt32,   weftUint32,
                                        weftInt64,   weftUint64,  weftFloat16, weftFloat32,
                                        weftFloat64, weftBfloat16};
constexpr weftRedOp_t kAllOps[] = {weftSum, weftProd, weftMax, weftMin, weftAvg};

size_t sizeOf(weftDataType_t type);
const char* nameOf(weftDataType_t type);
const char* nameOf(weftRedOp_t op);
bool isFloat(weftDataType_t type);

// Elements [begin, begin + count) of rank's input for a reduction with op: small enough that
// integer results never overflow, and exactly representable in every type.
std::vector<double> inputs(int rank, size_t begin, size_t count, weftRedOp_t op,
                           weftDataType_t type);

// Typed storage in a byte vector.
std::vector<char> encode(weftDataType_t type, const std::vector<double>& values);
double decodeAt(weftDataType_t type, const void* data, size_t i);

// Elements [begin, begin + count) of every rank's inputs, reduced across ranks 0..nranks-1
// (for avg, the sum divided by nranks, truncated for integers).
std::vector<double> reduceAcrossRanks(int nranks, size_t begin, size_t count, weftRedOp_t op,
                                      weftDataType_t type);

// Tolerance for a result reduced over nranks inputs: 0 wherever the exact result is
// representable (see reference.cc).
double tolerance(weftDataType_t type, weftRedOp_t op, int nranks, double expected);

// Compares got (n elements of type) with expected; on mismatch returns a message naming the
// first wrong element and how many are wrong, else "".
std::string compare(weftDataType_t type, weftRedOp_t op, int nranks, const void* got,
                    const std::vector<double>& expected);

}  // namespace weft::test
