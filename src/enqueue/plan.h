// Planning: turns ops into phases the executor runs. The cost model picks each collective's
// algorithm; a group's sends and receives on one communicator become a single phase so they
// progress together.
#pragma once

#include <string>
#include <vector>

#include "collectives/algorithms.h"
#include "collectives/executor.h"
#include "collectives/schedule.h"
#include "src/base/status.h"
#include "src/enqueue/op.h"

namespace weft {

class Communicator;

struct Phase {
  Schedule schedule;
  std::vector<BufferView> buffers;
  ReduceFn reduce = nullptr;
  std::string what;  // "all_reduce #12 (4096 x float32 sum, ring)", for logs and errors
  // An average is a sum until this divides the result.
  void* averageBuffer = nullptr;
  size_t averageCount = 0;
  int averageDivisor = 1;
  weftDataType_t type = weftFloat32;

  void finish() const;
};

Status planCollective(Communicator& comm, const Op& op, Phase* out);
Status planPointToPoint(Communicator& comm, const std::vector<Op>& ops, Phase* out);

}  // namespace weft
