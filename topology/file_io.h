// Reading topology files safely: the size is checked before anything is read, and the format is
// recognised from the content, not the name.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "src/base/status.h"

namespace weft::topo {

// Topology files are small (the largest real ones are a few hundred KB); anything bigger than
// this is refused before it is read.
constexpr size_t kMaxTopologyFileBytes = 64u << 20;

// Reads a whole regular file of at most `maxBytes`. Errors name the file and the problem.
Status readTopologyFile(const std::string& path, std::string* out,
                        size_t maxBytes = kMaxTopologyFileBytes);

enum class FileFormat { kNcclXml, kHwlocXml, kNvsmiMatrix, kUnknown };

// Recognises a format from the text. For XML it looks at the root element only; `why` says what
// was found when the format is unknown ("root element <graphs> ...").
FileFormat detectFormat(std::string_view text, std::string* why);

const char* toString(FileFormat format);

}  // namespace weft::topo
