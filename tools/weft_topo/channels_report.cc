#include "tools/weft_topo/channels_report.h"

#include "src/base/status.h"
#include "tools/weft_topo/wrap.h"
#include "topology/bandwidth.h"
#include "topology/export_json.h"

namespace weft::topotool {
namespace {

std::string bw(double v) {
  return topo::formatBandwidth(v);
}

std::vector<std::string> names(const topo::System& s, const topo::RankSet& r,
                               const std::vector<int>& order) {
  std::vector<std::string> out;
  out.reserve(order.size());
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
  std::string head = strprintf("Rings: %s, %d host(s)", p.ranks.note.c_str(), p.hosts);
  if (!p.ranks.cpu && static_cast<int>(p.ranks.nodes.size()) < p.ranks.asked) {
    head += strprintf("; --device cpu plans %d CPU ranks instead", p.ranks.asked);
  }
  std::string out = wrap(head, kTextWidth, "", "       ");
  out += wrap(p.summary, kTextWidth, "  ", "    ");
  if (!p.nicOfRank.empty() && p.nicOfRank.front() >= 0) {
    std::vector<std::string> nics;
    for (size_t r = 0; r < p.nicOfRank.size(); ++r)
      nics.push_back(p.ranks.label(s, static_cast<int>(r)) + " " + nic(s, p.nicOfRank[r]));
    out += wrapList(nics, kTextWidth, "  NIC by locality: ", "                   ");
  }
  for (size_t i = 0; i < p.rings.size(); ++i) {
    const topo::Ring& r = p.rings[i];
    std::string order = join(names(s, p.ranks, r.order), " -> ");
    if (p.hosts > 1) {
      order = strprintf("[%s] %s [%s] -> next host", nic(s, r.nicIn).c_str(), order.c_str(),
                        nic(s, r.nicOut).c_str());
    } else if (r.order.size() > 1) {
      order += " -> " + p.ranks.label(s, r.order.front());
    }
    std::string prefix = strprintf("  ring %zu: ", i);
    out += wrap(order, kTextWidth, prefix, std::string(prefix.size(), ' '));
    if (r.bw >= topo::kLocalBw) {
      out += "          no link limits it: all its ranks share memory\n";
    } else {
      out += strprintf("          %s per channel, bottleneck %s\n", bw(r.bw).c_str(),
                       bw(r.bottleneck).c_str());
    }
    out += wrap(r.why, kTextWidth, "          why: ", "               ");
  }
  return out;
}

std::string formatTrees(const topo::System& s, const topo::TreePlan& p) {
  std::string head = p.hosts > 1 ? strprintf("Trees: double binary tree over %d hosts; %s", p.hosts,
                                             p.ranks.note.c_str())
                                 : "Trees: one host, so a chain; " + p.ranks.note;
  std::string out = wrap(head, kTextWidth, "", "       ");
  for (size_t i = 0; i < p.trees.size(); ++i) {
    const topo::Tree& t = p.trees[i];
    std::string chain = "chain " + join(names(s, p.ranks, t.chain), " > ");
    if (p.hosts > 1) chain += " (head uses " + nic(s, t.nic) + ")";
    std::string prefix = strprintf("  tree %zu: ", i);
    out += wrap(chain, kTextWidth, prefix, std::string(prefix.size() + 6, ' '));
    if (p.hosts > 1) {
      std::string hosts;
      for (size_t h = 0; h < t.hosts.parent.size(); ++h) {
        hosts +=
            strprintf(" %zu<-%s", h,
                      t.hosts.parent[h] < 0 ? "root" : std::to_string(t.hosts.parent[h]).c_str());
      }
      out += wrap("hosts (child<-parent):" + hosts, kTextWidth, "          ",
                  "                                ");
    }
    out += strprintf("          bottleneck %s\n", bw(t.bottleneck).c_str());
    out += wrap(t.why, kTextWidth, "          why: ", "               ");
  }
  return out;
}

nlohmann::json ringsJson(const topo::System& s, const topo::RingPlan& p) {
  nlohmann::json rings = nlohmann::json::array();
  for (const topo::Ring& r : p.rings) {
    nlohmann::json j;
    j["order"] = names(s, p.ranks, r.order);
    j["bw_gbs"] = topo::bandwidthJson(r.bw);
    j["bottleneck_gbs"] = topo::bandwidthJson(r.bottleneck);
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
    j["bottleneck_gbs"] = topo::bandwidthJson(t.bottleneck);
    j["bottleneck"] = t.bottleneckLink;
    j["why"] = t.why;
    trees.push_back(j);
  }
  return {{"ranks", p.ranks.note}, {"hosts", p.hosts}, {"trees", trees}};
}

}  // namespace weft::topotool
