#include "tools/weft_trace/analysis.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

namespace weft::trace {
namespace {

std::string format(const char* f, double v) {
  char buf[64];
  snprintf(buf, sizeof(buf), f, v);
  return buf;
}

// Each rank's latest dump of one communicator, by rank.
using Ranks = std::map<int, const RankDump*>;

// The call a rank recorded as collective n, or nullptr.
const TracedCall* collective(const RankDump& d, int64_t n) {
  const TracedCall* found = nullptr;
  for (const TracedCall& c : d.calls) {
    if (c.collective == n) found = &c;
  }
  return found;
}

// The highest collective number the rank started (-1: none kept).
int64_t reached(const RankDump& d) {
  int64_t n = -1;
  for (const TracedCall& c : d.calls) {
    if (c.collective >= 0 && c.ran()) n = std::max(n, c.collective);
  }
  return n;
}

std::string numbered(const TracedCall& c) {
  std::string s = c.call;
  const size_t space = s.find(' ');
  const std::string number = " #" + std::to_string(c.collective);
  return space == std::string::npos ? s + number : s.insert(space, number);
}

std::string ago(const RankDump& d, double us) {
  return format("%.1f s", (d.timeUs - us) / 1e6) + " before its dump";
}

// What the rank's dump shows it doing: calls started and not ended, then calls enqueued and
// not started.
std::string activity(const RankDump& d) {
  std::vector<std::string> parts;
  for (const TracedCall& c : d.calls) {
    if (c.state == "started") {
      parts.push_back("in " + (c.collective >= 0 ? numbered(c) : c.call) + ", started " +
                      ago(d, c.startedUs));
    }
  }
  int queued = 0;
  for (const TracedCall& c : d.calls)
    queued += c.state == "enqueued" ? 1 : 0;
  if (queued > 0) parts.push_back(std::to_string(queued) + " call(s) enqueued, not started");
  if (parts.empty()) return "nothing running: its program has not made the next call";
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i)
    out += (i > 0 ? "; " : "") + parts[i];
  return out;
}

// Returns whether it found one.
bool reportDifference(const Ranks& ranks, std::ostream& out) {
  std::set<int64_t> numbers;
  for (const auto& [r, d] : ranks) {
    for (const TracedCall& c : d->calls) {
      if (c.collective >= 0) numbers.insert(c.collective);
    }
  }
  for (int64_t n : numbers) {
    std::map<std::string, std::vector<int>> byCall;
    for (const auto& [r, d] : ranks) {
      if (const TracedCall* c = collective(*d, n)) byCall[c->call].push_back(r);
    }
    if (byCall.size() < 2) continue;
    out << "  first difference: collective #" << n << ":";
    const char* sep = " ";
    for (const auto& [call, who] : byCall) {
      out << sep << ranksText(who) << " called " << call;
      sep = "; ";
    }
    out << "\n";
    return true;
  }
  return false;
}

void reportBehind(const Ranks& ranks, bool differ, std::ostream& out) {
  int64_t most = -1;
  for (const auto& [r, d] : ranks)
    most = std::max(most, reached(*d));
  std::vector<int> ahead;
  std::map<int64_t, std::vector<int>> behind;  // by how far they got
  for (const auto& [r, d] : ranks) {
    const int64_t n = reached(*d);
    if (n == most) {
      ahead.push_back(r);
    } else {
      behind[n].push_back(r);
    }
  }
  const TracedCall* next = most >= 0 ? collective(*ranks.at(ahead.front()), most) : nullptr;
  if (behind.empty()) {
    if (next != nullptr && !differ) {
      out << "  every rank reached collective #" << most << " (" << next->call << ")\n";
    }
    return;
  }
  for (const auto& [n, who] : behind) {
    out << "  behind: " << ranksText(who) << (who.size() > 1 ? " are" : " is") << " at collective #"
        << n << " where " << ranksText(ahead) << (ahead.size() > 1 ? " are" : " is") << " at #"
        << most;
    if (next != nullptr) out << " (" << next->call << ")";
    out << "\n";
    for (int r : who) {
      const RankDump& d = *ranks.at(r);
      out << "    rank " << r << ": ";
      if (n >= 0) {
        const TracedCall* last = collective(d, n);
        out << "last collective " << numbered(*last) << " " << last->state << "; ";
      }
      out << activity(d) << "\n";
    }
  }
}

}  // namespace

std::string ranksText(const std::vector<int>& ranks) {
  std::vector<int> r = ranks;
  std::sort(r.begin(), r.end());
  r.erase(std::unique(r.begin(), r.end()), r.end());
  std::vector<std::string> pieces;
  for (size_t i = 0; i < r.size();) {
    size_t j = i;
    while (j + 1 < r.size() && r[j + 1] == r[j] + 1)
      ++j;
    pieces.push_back(j >= i + 2 ? std::to_string(r[i]) + "-" + std::to_string(r[j])
                                : std::to_string(r[i]));
    if (j == i + 1) pieces.push_back(std::to_string(r[j]));
    i = j + 1;
  }
  std::string out = r.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (i > 0) out += i + 1 == pieces.size() ? " and " : ", ";
    out += pieces[i];
  }
  return out;
}

std::string analyze(const std::vector<RankDump>& dumps) {
  // The latest dump of each rank of each communicator.
  std::map<std::string, Ranks> comms;
  for (const RankDump& d : dumps) {
    const RankDump*& slot = comms[d.comm][d.rank];
    if (slot == nullptr || d.timeUs > slot->timeUs) slot = &d;
  }
  std::ostringstream out;
  for (const auto& [tag, ranks] : comms) {
    const RankDump& any = *ranks.begin()->second;
    std::vector<int> have;
    for (const auto& [r, d] : ranks)
      have.push_back(r);
    out << "communicator " << tag;
    if (!any.name.empty()) out << " (" << any.name << ")";
    out << ", " << any.nranks << " ranks: dumps from " << ranksText(have) << "\n";
    std::vector<int> missing;
    for (int r = 0; r < any.nranks; ++r) {
      if (ranks.count(r) == 0) missing.push_back(r);
    }
    if (!missing.empty()) {
      out << "  no dump from " << ranksText(missing)
          << ": dead, hung outside Weft, or not sent SIGUSR1 (WEFT_TRACE_DUMP set)\n";
    }
    const bool differ = reportDifference(ranks, out);
    reportBehind(ranks, differ, out);
    for (const auto& [r, d] : ranks) {
      out << "  rank " << r << " (" << d->host << ", pid " << d->pid << "): ";
      if (!d->error.empty()) {
        out << d->error << "\n";
      } else {
        out << "no error; dumped on " << d->reason << "\n";
      }
    }
  }
  return out.str();
}

}  // namespace weft::trace
