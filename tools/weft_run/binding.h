// Binding local ranks to cores, as mpirun binds ranks by default: each rank of this host gets an
// equal, disjoint share of the cores weft-run may use, in topology order (package, then core), so
// that the scheduler cannot stack two ranks on one core while other work keeps the cores busy
// (ranks that wake each other are pulled together). A rank's threads (its compute included) stay in
// its share. By default more ranks than cores are not bound: they must move to find a free core.
#pragma once

#include <sched.h>

#include <vector>

namespace weft::run {

enum class Bind { kAuto, kCores, kNone };

// A core: its hardware threads' CPU numbers.
using Core = std::vector<int>;

// The cores of the CPUs in `allowed`, from sysfs's topology (a CPU without it is a core of its
// own), ordered by package and then by their first CPU.
std::vector<Core> coresOf(const cpu_set_t& allowed);

// The CPUs of local rank `localRank` of `localSize`: its share of `cores` (empty: not bound).
// kAuto binds where the ranks are no more than the cores; kCores also where they are more, a core
// each in turn.
std::vector<int> rankCpus(const std::vector<Core>& cores, int localRank, int localSize, Bind how);

}  // namespace weft::run
