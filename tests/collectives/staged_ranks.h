// For tests that run one StagedOp per virtual rank in this thread: n ranks' flags and staging
// areas on the heap, each rank allowed to read the others' memory (this process's own).
#pragma once

#include <unistd.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "collectives/staged.h"

namespace weft::test {

struct StagedRanks {
  StagedRanks(int n, size_t stagingBytes)
      : controls(n), owners(n), staging(n, std::vector<char>(stagingBytes)), areas(n), ops(n) {
    std::vector<const SlotArea*> pointers;
    for (int r = 0; r < n; ++r) {
      controls[r] = std::make_unique<SlotControl>();
      owners[r] = std::make_unique<WindowOwner>();
      owners[r]->pid = getpid();  // where mapped and single-copy operations find the buffers
      owners[r]->readsPeers.store(1);
      areas[r].control = controls[r].get();
      areas[r].owner = owners[r].get();
      areas[r].staging = staging[r].data();
      areas[r].stagingBytes = stagingBytes;
      pointers.push_back(&areas[r]);
    }
    for (int r = 0; r < n; ++r)
      groups.push_back(std::make_unique<DirectGroup>(r, pointers));
  }

  int n() const { return static_cast<int>(ops.size()); }

  std::vector<std::unique_ptr<SlotControl>> controls;
  std::vector<std::unique_ptr<WindowOwner>> owners;
  std::vector<std::vector<char>> staging;
  std::vector<SlotArea> areas;
  std::vector<std::unique_ptr<DirectGroup>> groups;
  std::vector<StagedOp> ops;
};

}  // namespace weft::test
