#include "weft/parallel/mesh.hpp"

#include <string>

#include "agree.h"  // the layer sees only include/ and itself

namespace weft::parallel {
namespace {

[[noreturn]] void invalid(const std::string& message) {
  throw Error(weftInvalidArgument, message);
}

std::string describe(const std::vector<Axis>& axes) {
  std::string out;
  for (const Axis& a : axes)
    out += (out.empty() ? "" : " x ") + a.name + " " + std::to_string(a.size);
  return out.empty() ? "no axes" : out;
}

}  // namespace

Mesh::Mesh(const Comm& world, std::vector<Axis> axes)
    : axes_(std::move(axes)), rank_(world.rank()), size_(world.size()) {
  // The ranks agree on the axes before any of them checks or splits by its own.
  SettingsHash hash;
  for (const Axis& a : axes_) {
    hash.mix(a.name);
    hash.mix(static_cast<uint64_t>(a.size));
  }
  const std::vector<uint64_t> all = allGatherWords(world, {hash.value()});
  for (size_t r = 0; r < all.size(); ++r) {
    if (all[r] != hash.value()) {
      throw Error(weftInvalidUsage, "the ranks gave different mesh axes: rank " +
                                        std::to_string(r) + "'s differ from rank " +
                                        std::to_string(rank_) + "'s (" + describe(axes_) + ")");
    }
  }
  long long product = 1;
  for (size_t i = 0; i < axes_.size(); ++i) {
    if (axes_[i].size < 1)
      invalid("mesh axis " + axes_[i].name + " has size " + std::to_string(axes_[i].size) +
              "; sizes must be at least 1");
    for (size_t j = 0; j < i; ++j) {
      if (axes_[j].name == axes_[i].name) invalid("mesh axis " + axes_[i].name + " appears twice");
    }
    product *= axes_[i].size;
  }
  if (axes_.empty() || product != size_) {
    invalid("mesh axes " + describe(axes_) + " make " + std::to_string(product) +
            " ranks, but the communicator has " + std::to_string(size_));
  }
  // Coordinates, last axis fastest; the stride of axis i is the product of the sizes after it.
  coords_.resize(axes_.size());
  int rest = rank_;
  for (size_t i = axes_.size(); i-- > 0;) {
    coords_[i] = rest % axes_[i].size;
    rest /= axes_[i].size;
  }
  // One split per axis, in order on every rank: the color is the rank with this axis's
  // coordinate taken out, which the ranks of one line along the axis share.
  for (size_t i = 0; i < axes_.size(); ++i) {
    int stride = 1;
    for (size_t j = i + 1; j < axes_.size(); ++j)
      stride *= axes_[j].size;
    const int color = rank_ - coords_[i] * stride;
    comms_.push_back(world.split(color, coords_[i]));
  }
}

size_t Mesh::indexOf(std::string_view axis) const {
  for (size_t i = 0; i < axes_.size(); ++i) {
    if (axes_[i].name == axis) return i;
  }
  invalid("the mesh (" + describe(axes_) + ") has no axis " + std::string(axis));
}

}  // namespace weft::parallel
