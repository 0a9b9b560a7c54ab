#include "store/command_record_codec.h"

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "base/time.h"

namespace adapt::store {
namespace {

using nlohmann::json;

json NullIfEmpty(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

template <typename T>
json NullIfUnset(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

std::string TextAt(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<int> IntAt(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int>();
}

// The inverse of FormatRfc3339 ("2026-11-29T19:30:00.123Z"), the only form rows hold.
std::optional<int64_t> TimeAt(const json& j, const char* key) {
  std::string text = TextAt(j, key);
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0, ms = 0;
  char z = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3d%c", &y, &mo, &d, &h, &mi, &s, &ms,
                  &z) != 8 ||
      z != 'Z')
    return std::nullopt;
  using namespace std::chrono;
  year_month_day date{year{y}, month{static_cast<unsigned>(mo)}, day{static_cast<unsigned>(d)}};
  if (!date.ok()) return std::nullopt;
  auto at = sys_days{date} + hours{h} + minutes{mi} + seconds{s} + milliseconds{ms};
  return duration_cast<milliseconds>(at.time_since_epoch()).count();
}

}  // namespace

std::string EncodeCommandData(const CommandRecord& c) {
  json data = {{"id", c.id},
               {"sandboxId", c.sandbox_id},
               {"status", c.status},
               {"argv", c.argv},
               {"cwd", NullIfEmpty(c.cwd)},
               {"user", NullIfEmpty(c.user)},
               {"timeoutSeconds", c.timeout_seconds},
               {"exitCode", NullIfUnset(c.exit_code)},
               {"signal", NullIfUnset(c.signal)},
               {"truncated", c.truncated},
               {"startedAt", FormatRfc3339(c.created_at)},
               {"finishedAt", c.finished_at ? json(FormatRfc3339(*c.finished_at)) : json(nullptr)},
               {"terminationReason", NullIfEmpty(c.termination_reason)},
               {"error", NullIfEmpty(c.error)},
               {"servedBy", c.served_by}};
  return data.dump(-1, ' ', false, json::error_handler_t::replace);
}

void DecodeCommandData(const std::string& text, CommandRecord& c) {
  json j = json::parse(text, nullptr, false);
  if (!j.is_object()) return;
  if (auto argv = j.find("argv"); argv != j.end() && argv->is_array())
    for (const auto& a : *argv)
      if (a.is_string()) c.argv.push_back(a.get<std::string>());
  c.cwd = TextAt(j, "cwd");
  c.user = TextAt(j, "user");
  c.timeout_seconds = IntAt(j, "timeoutSeconds").value_or(c.timeout_seconds);
  c.exit_code = IntAt(j, "exitCode");
  c.signal = IntAt(j, "signal");
  // Only rows written before migration 38 hold the output here.
  c.stdout_text = TextAt(j, "stdout");
  c.stderr_text = TextAt(j, "stderr");
  auto truncated = j.find("truncated");
  c.truncated = truncated != j.end() && truncated->is_boolean() && truncated->get<bool>();
  c.finished_at = TimeAt(j, "finishedAt");
  c.termination_reason = TextAt(j, "terminationReason");
  c.error = TextAt(j, "error");
  if (std::string served_by = TextAt(j, "servedBy"); !served_by.empty()) c.served_by = served_by;
}

}  // namespace adapt::store
