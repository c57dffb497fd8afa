#include "tools/weft_trace/dump.h"

#include <nlohmann/json.hpp>

namespace weft::trace {

bool parseDump(const std::string& text, const std::string& file, RankDump* out,
               std::string* error) {
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    if (!j.is_object() || !j.contains("weft_trace")) {
      *error = file + ": not a Weft trace dump (no \"weft_trace\" field)";
      return false;
    }
    if (j.at("weft_trace").get<int>() != 1) {
      *error = file + ": trace format " + j.at("weft_trace").dump() + " is not one this tool reads";
      return false;
    }
    RankDump d;
    d.file = file;
    d.comm = j.at("comm").get<std::string>();
    d.name = j.value("name", "");
    d.rank = j.at("rank").get<int>();
    d.nranks = j.at("nranks").get<int>();
    d.host = j.value("host", "");
    d.pid = j.value("pid", int64_t{0});
    d.reason = j.value("reason", "");
    d.error = j.value("error", "");
    d.timeUs = j.value("time_us", 0.0);
    for (const nlohmann::json& c : j.at("calls")) {
      TracedCall t;
      t.id = c.at("id").get<uint64_t>();
      t.kind = c.at("kind").get<std::string>();
      t.call = c.at("call").get<std::string>();
      t.collective = c.value("collective", int64_t{-1});
      t.state = c.at("state").get<std::string>();
      t.how = c.value("how", "");
      t.result = c.value("result", "");
      t.enqueuedUs = c.value("enqueued_us", 0.0);
      t.startedUs = c.value("started_us", 0.0);
      t.endedUs = c.value("ended_us", 0.0);
      d.calls.push_back(std::move(t));
    }
    if (d.rank < 0 || d.nranks < 1 || d.rank >= d.nranks) {
      *error = file + ": rank " + std::to_string(d.rank) + " of " + std::to_string(d.nranks) +
               " is out of range";
      return false;
    }
    *out = std::move(d);
    return true;
  } catch (const nlohmann::json::exception& e) {
    *error = file + ": " + e.what();
    return false;
  }
}

}  // namespace weft::trace
