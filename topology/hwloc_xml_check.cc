#include "topology/hwloc_xml_check.h"

#include <pugixml.hpp>

#include <algorithm>
#include <cctype>
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

bool forbiddenInXml(unsigned long c) {
  return (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || (c >= 0xD800 && c <= 0xDFFF) ||
         c == 0xFFFE || c == 0xFFFF || c > 0x10FFFF;
}

// The code point of the character reference that starts at text[at] ("&#16;", "&#x10;"), or -1
// when none does. Large ones read as 0x110000, past the last code point.
long characterReference(std::string_view text, size_t at) {
  if (text.compare(at, 2, "&#") != 0) return -1;
  size_t i = at + 2;
  const int base = i < text.size() && text[i] == 'x' ? 16 : 10;
  if (base == 16) ++i;
  const size_t first = i;
  long code = 0;
  for (; i < text.size(); ++i) {
    const int c = static_cast<unsigned char>(text[i]);
    const int digit = std::isdigit(c)                  ? c - '0'
                      : base == 16 && std::isxdigit(c) ? std::tolower(c) - 'a' + 10
                                                       : -1;
    if (digit < 0) break;
    code = std::min(code * base + digit, 0x110000L);
  }
  return i > first && i < text.size() && text[i] == ';' ? code : -1;
}

bool startsEntity(std::string_view text, size_t at) {
  for (std::string_view e : {"&lt;", "&gt;", "&amp;", "&quot;", "&apos;"})
    if (text.compare(at, e.size(), e) == 0) return true;
  return false;
}

// XML 1.0 forbids most control characters, raw or as character references, and an '&' that starts
// no reference. pugixml reads such text quietly, while libxml2 (under hwloc's loader) reports it
// and reads on with other values, so the checks below would pass what hwloc then loads: files the
// fuzzer found this way crash hwloc 2.9.
Status checkCharacters(std::string_view text, const std::string& name) {
  for (size_t i = 0; i < text.size(); ++i) {
    long code = static_cast<unsigned char>(text[i]);
    if (text[i] == '&') {
      code = characterReference(text, i);
      if (code < 0 && !startsEntity(text, i)) {
        return errorf(weftInvalidArgument,
                      "%s: the '&' at byte %zu starts no reference such as &amp; or &#38; (hwloc "
                      "cannot load it)",
                      name.c_str(), i);
      }
    }
    if (code >= 0 && forbiddenInXml(static_cast<unsigned long>(code))) {
      return errorf(weftInvalidArgument,
                    "%s: character U+%04lX at byte %zu is not allowed in XML (hwloc cannot load "
                    "it)",
                    name.c_str(), code, i);
    }
  }
  return okStatus();
}

bool isBitmapAttribute(std::string_view name) {
  auto endsWith = [&](std::string_view tail) {
    return name.size() >= tail.size() && name.substr(name.size() - tail.size()) == tail;
  };
  return endsWith("cpuset") || endsWith("nodeset");
}

// hwloc 2.9's bitmap parser counts the commas after the first character, so a value that starts
// with one has a substring more than it counted, and it asserts.
Status checkBitmaps(const pugi::xml_document& doc, const std::string& name) {
  for (pugi::xpath_node x : doc.select_nodes("//*[@*]")) {
    for (pugi::xml_attribute a : x.node().attributes()) {
      if (!isBitmapAttribute(a.name()) || a.value()[0] != ',') continue;
      return errorf(weftInvalidArgument,
                    "%s: <%s> at byte %td has %s=\"%.40s\", a bitmap that starts with a comma "
                    "(hwloc cannot load it)",
                    name.c_str(), x.node().name(), x.node().offset_debug(), a.name(), a.value());
    }
  }
  return okStatus();
}

}  // namespace

Status checkHwlocXml(std::string_view text, const std::string& name,
                     std::vector<std::string>* notes) {
  WEFT_RETURN_IF_ERROR(checkCharacters(text, name));
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
  WEFT_RETURN_IF_ERROR(checkBitmaps(doc, name));
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
