#include "tools/weft_topo/drawing.h"

#include <algorithm>

namespace weft::topotool {
namespace {

// "ring 3", "rings 0-5", "rings 0, 2, 4".
std::string ringNumbers(const std::vector<size_t>& n) {
  if (n.size() == 1) return "ring " + std::to_string(n[0]);
  bool run = n.back() - n.front() + 1 == n.size();  // ascending and distinct
  if (run) return "rings " + std::to_string(n.front()) + "-" + std::to_string(n.back());
  std::string out = "rings ";
  for (size_t i = 0; i < n.size(); ++i)
    out += (i ? ", " : "") + std::to_string(n[i]);
  return out;
}

}  // namespace

std::vector<topo::DotRing> ringsToDraw(const topo::RingPlan& p) {
  std::vector<topo::DotRing> out;
  std::vector<std::vector<size_t>> numbers;  // per drawn ring, the plan's rings it stands for
  for (size_t i = 0; i < p.rings.size(); ++i) {
    const topo::Ring& r = p.rings[i];
    topo::DotRing d;
    d.closed = p.hosts == 1;
    if (r.nicIn >= 0) d.nodes.push_back(r.nicIn);
    for (int rank : r.order)
      d.nodes.push_back(p.ranks.nodes[static_cast<size_t>(rank)]);
    if (r.nicOut >= 0) d.nodes.push_back(r.nicOut);
    // CPU ranks of one NUMA node run on one node of the drawing: one stop.
    d.nodes.erase(std::unique(d.nodes.begin(), d.nodes.end()), d.nodes.end());
    if (d.closed && d.nodes.size() > 1 && d.nodes.front() == d.nodes.back()) d.nodes.pop_back();
    auto same = std::find_if(out.begin(), out.end(), [&](const topo::DotRing& o) {
      return o.nodes == d.nodes && o.closed == d.closed;
    });
    if (same != out.end()) {
      numbers[static_cast<size_t>(same - out.begin())].push_back(i);
      continue;
    }
    out.push_back(d);
    numbers.push_back({i});
  }
  for (size_t k = 0; k < out.size(); ++k)
    out[k].label = ringNumbers(numbers[k]);
  return out;
}

std::string drawing(const topo::System& system, const topo::RingPlan* rings) {
  return topo::writeDot(system, rings ? ringsToDraw(*rings) : std::vector<topo::DotRing>());
}

}  // namespace weft::topotool
