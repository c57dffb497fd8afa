#include "topology/hwloc_xml_reader.h"

#include <pugixml.hpp>

#include <sstream>

#ifdef WEFT_HAVE_HWLOC
#include <hwloc.h>

#include "topology/hwloc_import.h"
#include "topology/hwloc_xml_check.h"
#include "topology/hwloc_xml_load.h"
#include "topology/locality.h"
#endif

namespace weft::topo {
namespace {

// hwloc 3 OS device types are bits; hwloc 2 numbered them.
int osdevTypeV2(unsigned long bits) {
  if (bits & (1u << 5)) return 3;  // OPENFABRICS
  if (bits & (1u << 4)) return 2;  // NETWORK
  if (bits & (1u << 2)) return 1;  // GPU
  if (bits & (1u << 3)) return 5;  // COPROC
  if (bits & (1u << 6)) return 4;  // DMA
  if (bits & (1u << 1)) return 6;  // MEMORY
  return 0;                        // STORAGE (BLOCK)
}

}  // namespace

Status downgradeHwlocXml(std::string_view text, const std::string& name, std::string* out) {
  pugi::xml_document doc;
  pugi::xml_parse_result parsed =
      doc.load_buffer(text.data(), text.size(),
                      pugi::parse_default | pugi::parse_doctype | pugi::parse_declaration);
  if (!parsed) {
    return errorf(weftInvalidArgument, "%s: not well-formed XML at byte %td: %s", name.c_str(),
                  parsed.offset, parsed.description());
  }
  pugi::xml_node top = doc.document_element();
  if (std::string_view(top.name()) != "topology") {
    return errorf(weftInvalidArgument,
                  "%s: wrong root element <%s>: an hwloc XML file starts with <topology>",
                  name.c_str(), top.name());
  }
  std::string version = top.attribute("version").value();
  if (version.empty() || version[0] < '3' || version[0] > '9' || version.size() < 2 ||
      version[1] != '.') {
    out->assign(text);
    return okStatus();
  }
  top.attribute("version").set_value("2.0");
  // OS device types.
  for (pugi::xpath_node x : top.select_nodes("//object[@osdev_type]")) {
    pugi::xml_attribute a = x.node().attribute("osdev_type");
    unsigned long bits = strtoul(a.value(), nullptr, 10);
    a.set_value(osdevTypeV2(bits));
  }
  // Top-level <info> elements belong to the root object in hwloc 2.
  pugi::xml_node root = top.child("object");
  if (root) {
    std::vector<pugi::xml_node> infos;
    for (pugi::xml_node c : top.children("info"))
      infos.push_back(c);
    pugi::xml_node anchor = root.first_child();
    for (pugi::xml_node info : infos) {
      pugi::xml_node copy = anchor ? root.insert_copy_before(info, anchor) : root.append_copy(info);
      (void)copy;
      top.remove_child(info);
    }
  }
  std::ostringstream s;
  doc.save(s, "  ", pugi::format_default);
  *out = s.str();
  return okStatus();
}

#ifdef WEFT_HAVE_HWLOC

bool hwlocAvailable() {
  return true;
}

std::string hwlocDescription() {
#ifdef HWLOC_VERSION
  return std::string("hwloc ") + HWLOC_VERSION;
#else
  unsigned v = hwloc_get_api_version();
  return strprintf("hwloc API %u.%u", v >> 16, (v >> 8) & 0xff);
#endif
}

Status parseHwlocXml(std::string_view text, const std::string& name, System* out) {
  *out = System();
  std::vector<std::string> notes;
  WEFT_RETURN_IF_ERROR(checkHwlocXml(text, name, &notes));
  std::string xml;
  if (HWLOC_API_VERSION < 0x00030000) {
    WEFT_RETURN_IF_ERROR(downgradeHwlocXml(text, name, &xml));
  } else {
    xml.assign(text);
  }
  if (xml.size() > static_cast<size_t>(INT32_MAX)) {
    return errorf(weftInvalidArgument, "%s: too large for hwloc", name.c_str());
  }
  WEFT_RETURN_IF_ERROR(checkHwlocSurvivesXml(xml, name));
  hwloc_topology_t topo = loadHwlocXml(xml);
  if (topo == nullptr) {
    return errorf(weftInvalidArgument,
                  "%s: hwloc (%s) could not load this XML topology (set HWLOC_XML_VERBOSE=1 for "
                  "hwloc's reasons)",
                  name.c_str(), hwlocDescription().c_str());
  }
  Status s = systemFromHwloc(topo, name, out);
  hwloc_topology_destroy(topo);
  WEFT_RETURN_IF_ERROR(s);
  out->format = "hwloc XML";
  out->notes.insert(out->notes.end(), notes.begin(), notes.end());
  std::string speeds = assumedNetSpeedNote(*out, "hwloc XML");
  if (!speeds.empty()) out->notes.push_back(speeds);
  return okStatus();
}

#else

bool hwlocAvailable() {
  return false;
}

std::string hwlocDescription() {
  return "no hwloc";
}

Status parseHwlocXml(std::string_view, const std::string& name, System* out) {
  *out = System();
  return errorf(weftInvalidArgument,
                "%s: is an hwloc XML topology, but this build of Weft has no hwloc support "
                "(install libhwloc-dev and configure with -DWEFT_ENABLE_HWLOC=ON)",
                name.c_str());
}

#endif

}  // namespace weft::topo
