#include "collectives/algo_override.h"

#include "src/base/text.h"

#include <cctype>
#include <optional>
#include <string_view>
#include <vector>

namespace weft {
namespace {

using Mask = uint16_t;
static_assert(kNumAlgos + kNumShmPaths <= 16, "a bit each in a Mask");
constexpr const char* kPathNames[kNumShmPaths] = {"direct", "staged", "mapped", "singlecopy"};

constexpr Mask bit(Algo a) {
  return static_cast<Mask>(1u << static_cast<unsigned>(a));
}
constexpr Mask bit(ShmPath p) {
  return static_cast<Mask>(1u << (kNumAlgos + static_cast<unsigned>(p)));
}
constexpr Mask kAlgoBits = (1u << kNumAlgos) - 1;

Mask supportedMask(CollKind kind) {
  Mask mask = 0;
  for (int i = 0; i < kNumAlgos; ++i) {
    if (algoSupports(static_cast<Algo>(i), kind)) mask |= bit(static_cast<Algo>(i));
  }
  for (int i = 0; i < kNumShmPaths; ++i) {
    if (shmPathSupports(static_cast<ShmPath>(i), kind)) mask |= bit(static_cast<ShmPath>(i));
  }
  return mask;
}

std::optional<ShmPath> parsePath(std::string_view name) {
  for (int i = 0; i < kNumShmPaths; ++i) {
    if (equalsIgnoreCase(name, kPathNames[i])) return static_cast<ShmPath>(i);
  }
  return std::nullopt;
}

// What a selection leaves a collective: the algorithms free where it names only paths (for the
// calls they do not fit), everything where it names nothing the collective can use.
Mask settle(Mask mask, CollKind kind) {
  if (mask == 0) return supportedMask(kind);
  if ((mask & kAlgoBits) == 0) mask |= supportedMask(kind) & kAlgoBits;
  return mask;
}

// Pieces between sep, each trimmed.
std::vector<std::string_view> splitTrimmed(std::string_view s, char sep) {
  std::vector<std::string_view> parts = split(s, sep);
  for (auto& p : parts)
    p = trim(p);
  return parts;
}

// "ring,tree" or "^tree".
struct Selection {
  bool exclude = false;
  Mask algos = 0;
  Mask applyTo(CollKind kind) const {
    Mask supported = supportedMask(kind);
    if (!exclude) return supported & algos;
    // Mapped and single copy are ways of a staged call: leaving staged out leaves them out too.
    Mask out = algos;
    if ((out & bit(ShmPath::kStaged)) != 0)
      out |= bit(ShmPath::kMapped) | bit(ShmPath::kSingleCopy);
    return supported & ~out;
  }
};

Status invalid(const std::string& text, const std::string& why) {
  return errorf(weftInvalidArgument, "WEFT_ALGO \"%s\": %s", text.c_str(), why.c_str());
}

Status parseSelection(const std::string& text, std::string_view list, Selection* out) {
  Selection sel;
  if (!list.empty() && list.front() == '^') {
    sel.exclude = true;
    list = trim(list.substr(1));
  }
  for (std::string_view name : splitTrimmed(list, ',')) {
    if (name.empty()) return invalid(text, "empty algorithm name");
    if (std::optional<Algo> algo = parseAlgo(name)) {
      sel.algos |= bit(*algo);
    } else if (std::optional<ShmPath> path = parsePath(name)) {
      sel.algos |= bit(*path);
    } else {
      return invalid(text, "unknown algorithm '" + std::string(name) +
                               "' (known: ring, tree, rd, pairwise, dissemination; paths: "
                               "direct, staged, mapped, singlecopy)");
    }
  }
  *out = sel;
  return okStatus();
}

}  // namespace

std::optional<CollKind> parseCollName(std::string_view name) {
  std::string plain;
  for (char c : name) {
    if (c != '_') plain += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  static constexpr std::pair<const char*, CollKind> kNames[] = {
      {"broadcast", CollKind::kBroadcast}, {"reduce", CollKind::kReduce},
      {"allreduce", CollKind::kAllReduce}, {"reducescatter", CollKind::kReduceScatter},
      {"allgather", CollKind::kAllGather}, {"alltoall", CollKind::kAllToAll},
      {"alltoallv", CollKind::kAllToAllv}, {"barrier", CollKind::kBarrier},
  };
  for (const auto& [n, kind] : kNames) {
    if (plain == n) return kind;
  }
  return std::nullopt;
}

AlgoOverride::AlgoOverride() {
  for (int k = 0; k < kNumCollKinds; ++k)
    allowed_[k] = supportedMask(static_cast<CollKind>(k));
}

Status AlgoOverride::parse(const std::string& text, AlgoOverride* out) {
  AlgoOverride result;
  std::optional<Selection> fallback;
  std::array<std::optional<Selection>, kNumCollKinds> perKind;
  for (std::string_view entry : splitTrimmed(trim(text), ';')) {
    if (entry.empty()) continue;  // "" and a trailing ';'
    size_t colon = entry.find(':');
    Selection sel;
    if (colon == std::string_view::npos) {
      if (fallback) return invalid(text, "more than one list without a collective");
      WEFT_RETURN_IF_ERROR(parseSelection(text, entry, &sel));
      fallback = sel;
      continue;
    }
    std::string_view collText = trim(entry.substr(0, colon));
    std::optional<CollKind> kind = parseCollName(collText);
    if (!kind) {
      return invalid(text, "unknown collective '" + std::string(collText) +
                               "' (known: broadcast, reduce, allreduce, reducescatter, "
                               "allgather, alltoall, alltoallv, barrier)");
    }
    auto k = static_cast<size_t>(*kind);
    if (perKind[k]) return invalid(text, std::string(collText) + " is given twice");
    WEFT_RETURN_IF_ERROR(parseSelection(text, trim(entry.substr(colon + 1)), &sel));
    // An exclusion must leave an algorithm: a path does not fit every call.
    const Mask mask = sel.applyTo(*kind);
    if (mask == 0 || (sel.exclude && (mask & kAlgoBits) == 0)) {
      return invalid(text, "leaves no algorithm or path that runs " + std::string(collText));
    }
    perKind[k] = sel;
  }
  for (int k = 0; k < kNumCollKinds; ++k) {
    auto kind = static_cast<CollKind>(k);
    Mask mask = 0;
    if (perKind[k]) {
      mask = perKind[k]->applyTo(kind);
    } else if (fallback) {
      mask = fallback->applyTo(kind);
    }
    result.allowed_[k] = settle(mask, kind);
  }
  *out = result;
  return okStatus();
}

bool AlgoOverride::allows(CollKind kind, Algo algo) const {
  auto k = static_cast<size_t>(kind);
  return k < allowed_.size() && (allowed_[k] & bit(algo)) != 0;
}

bool AlgoOverride::allows(CollKind kind, ShmPath path) const {
  auto k = static_cast<size_t>(kind);
  return k < allowed_.size() && (allowed_[k] & bit(path)) != 0;
}

const char* shmPathName(ShmPath path) {
  auto i = static_cast<size_t>(path);
  return i < kNumShmPaths ? kPathNames[i] : "?";
}

// The kinds each path runs (DirectGroup::fits and StagedOp::fits ask here first).
bool shmPathSupports(ShmPath path, CollKind kind) {
  switch (path) {
    case ShmPath::kDirect:
      return kind != CollKind::kAllToAllv;
    case ShmPath::kStaged:
    case ShmPath::kMapped:
      return kind != CollKind::kAllToAllv && kind != CollKind::kBarrier;
    case ShmPath::kSingleCopy:
      return kind == CollKind::kAllGather || kind == CollKind::kBroadcast ||
             kind == CollKind::kAllToAll;
  }
  return false;
}

}  // namespace weft
