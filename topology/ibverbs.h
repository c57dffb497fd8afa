// InfiniBand / RoCE adapters from libibverbs, opened at run time (libibverbs.so.1): the verbs
// devices present, and from sysfs their ports' rate, link layer and state. Without the library
// it logs at INFO and changes nothing.
#pragma once

#include "topology/sysfs.h"
#include "topology/system.h"

namespace weft::topo {

// Names of the verbs devices (mlx5_0, ...); empty when libibverbs is absent.
std::vector<std::string> listVerbsDevices();

// Gives the NICs behind verbs devices one port each (speed, link layer); adds NICs for devices
// the PCI tree does not show. Returns the number of ports found.
int addVerbsPorts(System* system, const Sysfs& sysfs);

}  // namespace weft::topo
