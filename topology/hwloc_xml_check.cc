#include "topology/hwloc_xml_check.h"

#include <pugixml.hpp>

namespace weft::topo {
namespace {

Status missing(const std::string& name, pugi::xml_node object, const char* has, const char* lacks) {
  return errorf(weftInvalidArgument,
                "%s: <object type=\"%s\"> at byte %td has %s but no %s (hwloc cannot load it)",
                name.c_str(), object.attribute("type").value(), object.offset_debug(), has, lacks);
}

}  // namespace

Status checkHwlocXml(std::string_view text, const std::string& name) {
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
  return okStatus();
}

}  // namespace weft::topo
