#include "topology/hwloc_xml_check.h"

#include <pugixml.hpp>

#include <set>
#include <sstream>
#include <utility>

namespace weft::topo {
namespace {

Status missing(const std::string& name, pugi::xml_node object, const char* has, const char* lacks) {
  return errorf(weftInvalidArgument,
                "%s: <object type=\"%s\"> at byte %td has %s but no %s (hwloc cannot load it)",
                name.c_str(), object.attribute("type").value(), object.offset_debug(), has, lacks);
}

// The objects a distances matrix lists that the file has no <object> for, as "OSDev:999": hetero
// matrices list "Type:gp_index", others numbers of their one type (gp_index, or os_index when
// indexing="os").
std::vector<std::string> missingDistanceObjects(const pugi::xml_document& doc,
                                                pugi::xml_node distances) {
  bool hetero = std::string_view(distances.name()) == "distances2hetero";
  std::string type = distances.attribute("type").value();
  const char* key =
      std::string_view(distances.attribute("indexing").value()) == "os" ? "os_index" : "gp_index";
  std::set<std::pair<std::string, std::string>> present;
  for (pugi::xpath_node x : doc.select_nodes("//object")) {
    pugi::xml_node o = x.node();
    if (o.attribute(key)) present.emplace(o.attribute("type").value(), o.attribute(key).value());
  }
  std::string indexes;
  for (pugi::xml_node i : distances.children("indexes"))
    indexes += std::string(i.text().get()) + " ";
  std::vector<std::string> missing;
  std::istringstream words(indexes);
  for (std::string w; words >> w;) {
    std::string t = type, index = w;
    if (hetero) {
      size_t colon = w.find(':');
      if (colon == std::string::npos) continue;  // hwloc refuses such a file itself
      t = w.substr(0, colon);
      index = w.substr(colon + 1);
    }
    if (present.count({t, index})) continue;
    missing.push_back(t);
    missing.back().append(":").append(index);
  }
  return missing;
}

}  // namespace

Status checkHwlocXml(std::string_view text, const std::string& name,
                     std::vector<std::string>* notes) {
  pugi::xml_document doc;
  pugi::xml_parse_result parsed = doc.load_buffer(text.data(), text.size());
  if (!parsed) {
    return errorf(weftInvalidArgument, "%s: not well-formed XML at byte %td: %s", name.c_str(),
                  parsed.offset, parsed.description());
  }
  pugi::xml_node root = doc.document_element().child("object");
  std::string_view type = root ? root.attribute("type").value() : "";
  if (root && type != "Machine" && type != "System") {
    return errorf(weftInvalidArgument,
                  "%s: the root object is a %s at byte %td; hwloc XML starts with the Machine",
                  name.c_str(), root.attribute("type").value(), root.offset_debug());
  }
  for (pugi::xpath_node x : doc.select_nodes("//object")) {
    pugi::xml_node o = x.node();
    if (o.attribute("cpuset") && !o.attribute("complete_cpuset")) {
      return missing(name, o, "a cpuset", "complete_cpuset");
    }
    if (o.attribute("nodeset") && !o.attribute("complete_nodeset")) {
      return missing(name, o, "a nodeset", "complete_nodeset");
    }
  }
  if (notes == nullptr) return okStatus();
  // Only NVLinkBandwidth: the one matrix the importer reads.
  for (pugi::xpath_node x : doc.select_nodes("//distances2 | //distances2hetero")) {
    pugi::xml_node d = x.node();
    if (std::string_view(d.attribute("name").value()) != "NVLinkBandwidth") continue;
    std::vector<std::string> gone = missingDistanceObjects(doc, d);
    if (gone.empty()) continue;
    std::string list;
    for (size_t i = 0; i < gone.size() && i < 4; ++i)
      list.append(i > 0 ? ", " : "").append(gone[i]);
    if (gone.size() > 4) list += strprintf(" and %zu more", gone.size() - 4);  // keep notes short
    bool one = gone.size() == 1;
    notes->push_back(strprintf(
        "hwloc distances NVLinkBandwidth (at byte %td) name %s, which the file has no object "
        "for: hwloc drops %s, so the NVLinks in %s are not modelled",
        d.offset_debug(), list.c_str(), one ? "it" : "them",
        one ? "its row and column" : "their rows and columns"));
  }
  return okStatus();
}

}  // namespace weft::topo
