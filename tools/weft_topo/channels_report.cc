#include "tools/weft_topo/channels_report.h"

#include "src/base/status.h"
#include "topology/bandwidth.h"

namespace weft::topotool {
namespace {

std::string bw(double v) {
  return topo::formatBandwidth(v);
}

std::vector<std::string> names(const topo::System& s, const topo::RankSet& r,
                               const std::vector<int>& order) {
  std::vector<std::string> out;
  for (int rank : order)
    out.push_back(r.label(s, rank));
  return out;
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i)
    out += (i ? sep : "") + v[i];
  return out;
}

std::string nic(const topo::System& s, int n) {
  return n >= 0 ? s.nodes[n].name : "-";
}

}  // namespace

std::string formatRings(const topo::System& s, const topo::RingPlan& p) {
  std::string out = strprintf("Rings: %s, %d host(s)\n", p.ranks.note.c_str(), p.hosts);
  out += "  " + p.summary + "\n";
  if (!p.nicOfRank.empty() && p.nicOfRank.front() >= 0) {
    std::string nics;
    for (size_t r = 0; r < p.nicOfRank.size(); ++r) {
      nics +=
          (r ? ", " : "") + p.ranks.label(s, static_cast<int>(r)) + " " + nic(s, p.nicOfRank[r]);
    }
    out += "  NIC by locality: " + nics + "\n";
  }
  for (size_t i = 0; i < p.rings.size(); ++i) {
    const topo::Ring& r = p.rings[i];
    std::string order = join(names(s, p.ranks, r.order), " -> ");
    if (p.hosts > 1) {
      order = "[" + nic(s, r.nicIn) + "] " + order + " [" + nic(s, r.nicOut) + "] -> next host";
    } else if (r.order.size() > 1) {
      order += " -> " + p.ranks.label(s, r.order.front());
    }
    out += strprintf("  ring %zu: %s\n", i, order.c_str());
    out += strprintf("          %s per channel, bottleneck %s\n", bw(r.bw).c_str(),
                     bw(r.bottleneck).c_str());
    out += "          why: " + r.why + "\n";
  }
  return out;
}

std::string formatTrees(const topo::System& s, const topo::TreePlan& p) {
  std::string out;
  if (p.hosts > 1) {
    out = strprintf("Trees: double binary tree over %d hosts; %s\n", p.hosts, p.ranks.note.c_str());
  } else {
    out = strprintf("Trees: one host, so a chain; %s\n", p.ranks.note.c_str());
  }
  for (size_t i = 0; i < p.trees.size(); ++i) {
    const topo::Tree& t = p.trees[i];
    out += strprintf("  tree %zu: chain %s", i, join(names(s, p.ranks, t.chain), " > ").c_str());
    if (p.hosts > 1) out += "  (head uses " + nic(s, t.nic) + ")";
    out += "\n";
    if (p.hosts > 1) {
      std::string hosts;
      for (size_t h = 0; h < t.hosts.parent.size(); ++h) {
        hosts +=
            strprintf(" %zu<-%s", h,
                      t.hosts.parent[h] < 0 ? "root" : std::to_string(t.hosts.parent[h]).c_str());
      }
      out += "          hosts (child<-parent):" + hosts + "\n";
    }
    out += strprintf("          bottleneck %s\n", bw(t.bottleneck).c_str());
    out += "          why: " + t.why + "\n";
  }
  return out;
}

nlohmann::json ringsJson(const topo::System& s, const topo::RingPlan& p) {
  nlohmann::json rings = nlohmann::json::array();
  for (const topo::Ring& r : p.rings) {
    nlohmann::json j;
    j["order"] = names(s, p.ranks, r.order);
    j["bw_gbs"] = r.bw;
    j["bottleneck_gbs"] = r.bottleneck;
    j["bottleneck"] = r.bottleneckLink;
    std::vector<std::string> hops;
    for (topo::PathClass c : r.hops)
      hops.push_back(topo::toString(c));
    j["hops"] = hops;
    if (r.nicIn >= 0) j["nic_in"] = nic(s, r.nicIn);
    if (r.nicOut >= 0) j["nic_out"] = nic(s, r.nicOut);
    j["why"] = r.why;
    rings.push_back(j);
  }
  return {{"ranks", p.ranks.note}, {"hosts", p.hosts}, {"summary", p.summary}, {"rings", rings}};
}

nlohmann::json treesJson(const topo::System& s, const topo::TreePlan& p) {
  nlohmann::json trees = nlohmann::json::array();
  for (const topo::Tree& t : p.trees) {
    nlohmann::json j;
    j["chain"] = names(s, p.ranks, t.chain);
    if (t.nic >= 0) j["nic"] = nic(s, t.nic);
    j["host_parent"] = t.hosts.parent;
    j["bottleneck_gbs"] = t.bottleneck;
    j["bottleneck"] = t.bottleneckLink;
    j["why"] = t.why;
    trees.push_back(j);
  }
  return {{"ranks", p.ranks.note}, {"hosts", p.hosts}, {"trees", trees}};
}

}  // namespace weft::topotool
