// Mesh: a communicator's ranks laid out on named axes ("dp", "tp", "pp", "ep"), with one
// communicator per axis that joins the ranks differing only in that axis's coordinate. The
// last axis varies fastest, as in torch's DeviceMesh and Megatron's rank order: in a mesh
// {dp 2, tp 3} rank 4 has dp 1, tp 1, and its tp communicator holds ranks 3, 4, 5.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "weft/weft.hpp"

namespace weft::parallel {

struct Axis {
  std::string name;
  int size = 1;
};

class Mesh {
 public:
  // Collective over `world`: every rank calls it with the same axes. Throws weft::Error
  // (weftInvalidArgument) when the axes' sizes do not multiply to world's size, a size is below
  // 1, or two axes share a name.
  Mesh(const Comm& world, std::vector<Axis> axes);

  int rank() const { return rank_; }
  int size() const { return size_; }
  const std::vector<Axis>& axes() const { return axes_; }
  // This rank's coordinate on `axis`, and the axis's size; both throw for an unknown name.
  int coordinate(std::string_view axis) const { return coords_[indexOf(axis)]; }
  int axisSize(std::string_view axis) const { return axes_[indexOf(axis)].size; }
  // The ranks that differ from this one only on `axis`, ranked by their coordinate on it.
  Comm& comm(std::string_view axis) { return comms_[indexOf(axis)]; }
  const Comm& comm(std::string_view axis) const { return comms_[indexOf(axis)]; }

 private:
  size_t indexOf(std::string_view axis) const;

  std::vector<Axis> axes_;
  std::vector<int> coords_;
  std::vector<Comm> comms_;
  int rank_ = 0;
  int size_ = 0;
};

}  // namespace weft::parallel
