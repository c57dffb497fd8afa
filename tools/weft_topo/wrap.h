// Long explanation lines folded for a terminal.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace weft::topotool {

// `text` folded to lines of at most `width` columns (a word longer than that stays whole), the
// first line starting with `first`, the others with `next`, each ending with a newline. Lines
// break after a "; " when the clause that follows would not fit, so clauses stay whole where
// they can; elsewhere between words.
std::string wrap(std::string_view text, size_t width, std::string_view first,
                 std::string_view next);

// `items` joined by ", " and folded like wrap, breaking only between items.
std::string wrapList(const std::vector<std::string>& items, size_t width, std::string_view first,
                     std::string_view next);

// The width weft-topo folds its text to.
constexpr size_t kTextWidth = 100;

}  // namespace weft::topotool
