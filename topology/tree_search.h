// Trees: across hosts a double binary tree (two trees in which every host is a leaf in at least
// one, so each host sends and receives at most three times per step); inside a host a chain of
// its ranks whose head is the rank next to the NIC the tree uses.
#pragma once

#include <string>
#include <vector>

#include "src/base/status.h"
#include "topology/paths.h"
#include "topology/ranks.h"
#include "topology/ring_search.h"
#include "topology/system.h"

namespace weft::topo {

struct HostTree {
  std::vector<int> parent;                 // per host; -1 at the root
  std::vector<std::vector<int>> children;  // per host
  int root = 0;
};

// Two binary trees over `hosts` hosts: the first numbers hosts in order, the second shifts them
// by one, so the first tree's leaves (even positions) are inner nodes of the second.
std::vector<HostTree> doubleBinaryTree(int hosts);

struct Tree {
  std::vector<int> chain;  // local ranks, head first
  int nic = -1;            // across hosts: the NIC of the head
  HostTree hosts;          // across hosts
  double bottleneck = 0;
  std::string bottleneckLink;
  std::string why;
};

struct TreePlan {
  RankSet ranks;
  int hosts = 1;
  std::vector<Tree> trees;
};

Status searchTrees(const System& system, const Paths& paths, const RankSet& ranks, int hosts,
                   const ChannelOptions& options, TreePlan* out);

}  // namespace weft::topo
