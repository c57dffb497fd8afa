#include "tools/weft_topo/wrap.h"

namespace weft::topotool {

std::string wrap(std::string_view text, size_t width, std::string_view first,
                 std::string_view next) {
  std::vector<std::string_view> words;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(' ', pos);
    if (end == std::string_view::npos) end = text.size();
    if (end > pos) words.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  // clause[i]: the columns from word i to the end of its clause (the next word ending in ';').
  std::vector<size_t> clause(words.size() + 1, 0);
  for (size_t i = words.size(); i-- > 0;) {
    bool ends = words[i].back() == ';' || i + 1 == words.size();
    clause[i] = words[i].size() + (ends ? 0 : 1 + clause[i + 1]);
  }
  std::string out(first);
  size_t column = first.size();
  bool empty = true;  // no word on this line yet
  for (size_t i = 0; i < words.size(); ++i) {
    bool afterClause = i > 0 && words[i - 1].back() == ';';
    bool overflows = column + 1 + words[i].size() > width;
    bool clauseMoves =
        afterClause && column + 1 + clause[i] > width && next.size() + clause[i] <= width;
    if (!empty && (overflows || clauseMoves)) {
      out += "\n";
      out += next;
      column = next.size();
      empty = true;
    }
    if (!empty) {
      out += ' ';
      ++column;
    }
    out += words[i];
    column += words[i].size();
    empty = false;
  }
  return out + "\n";
}

std::string wrapList(const std::vector<std::string>& items, size_t width, std::string_view first,
                     std::string_view next) {
  std::string out(first);
  size_t column = first.size();
  for (size_t i = 0; i < items.size(); ++i) {
    std::string item = items[i] + (i + 1 < items.size() ? "," : "");
    if (i > 0 && column + 1 + item.size() > width) {
      out += "\n";
      out += next;
      column = next.size();
    } else if (i > 0) {
      out += ' ';
      ++column;
    }
    out += item;
    column += item.size();
  }
  return out + "\n";
}

}  // namespace weft::topotool
