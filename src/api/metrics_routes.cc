// GET /metrics (admin key): Prometheus text exposition format 0.0.4 of what metering and the
// plans know, per organization: balance, credits, charged usage, metered quantities, plan
// limits, and sandboxes by status. Names follow Prometheus conventions: an `adapt_` prefix,
// base units (seconds, bytes) in the name, `_total` on counters.
#include <string>

#include "api/errors.h"
#include "api/routes.h"

namespace adapt::api {
namespace {

// A label value: backslash, double quote and line feed escaped.
std::string Label(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

// `n` / 10^`decimals` as exact decimal text (quantities are kept in milli-units).
std::string Decimal(__int128 n, int decimals) {
  bool negative = n < 0;
  if (negative) n = -n;
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(n % 10)));
    n /= 10;
  } while (n > 0);
  while (static_cast<int>(digits.size()) <= decimals) digits.insert(digits.begin(), '0');
  if (decimals > 0) digits.insert(digits.end() - decimals, '.');
  return (negative ? "-" : "") + digits;
}

class Exposition {
 public:
  void Family(const char* name, const char* type, const char* help) {
    text_ += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  }
  void Sample(const char* name, const std::string& labels, const std::string& value) {
    text_ += std::string(name) + "{" + labels + "} " + value + "\n";
  }
  std::string Take() { return std::move(text_); }

 private:
  std::string text_;
};

std::string OrgLabel(const std::string& org_id) { return "org=\"" + Label(org_id) + "\""; }

HttpResponse Render(const core::MetricsSnapshot& m) {
  Exposition out;
  auto per_org = [&](const char* name, const char* type, const char* help, auto value) {
    out.Family(name, type, help);
    for (const auto& o : m.orgs) out.Sample(name, OrgLabel(o.org_id), value(o));
  };
  // Money in the operator's currency unit, exact to the nano-unit.
  per_org("adapt_account_balance", "gauge", "Unexpired credits minus charged usage.",
          [](const core::OrgMetrics& o) { return Decimal(o.credits_nanos - o.usage_nanos, 9); });
  per_org("adapt_account_credits", "gauge", "Unexpired credits.",
          [](const core::OrgMetrics& o) { return Decimal(o.credits_nanos, 9); });
  per_org("adapt_account_charged_total", "counter", "Usage charged to the balance.",
          [](const core::OrgMetrics& o) { return Decimal(o.usage_nanos, 9); });
  per_org("adapt_usage_cpu_seconds_total", "counter", "Reserved cpu-seconds metered.",
          [](const core::OrgMetrics& o) { return Decimal(o.used.cpu_millis, 3); });
  per_org("adapt_usage_memory_byte_seconds_total", "counter",
          "Reserved memory metered, in byte-seconds.", [](const core::OrgMetrics& o) {
            return Decimal(__int128{o.used.memory_mib_millis} * 1048576, 3);
          });
  per_org("adapt_usage_storage_byte_seconds_total", "counter",
          "Allocated persistent storage metered, in byte-seconds.", [](const core::OrgMetrics& o) {
            return Decimal(__int128{o.used.storage_mib_millis} * 1048576, 3);
          });
  per_org("adapt_usage_gpu_seconds_total", "counter", "Reserved GPU-seconds metered.",
          [](const core::OrgMetrics& o) { return Decimal(o.used.gpu_millis, 3); });
  out.Family("adapt_plan_limit", "gauge",
             "A limit of the organization's plan (absent: no limit); memory and storage in "
             "bytes.");
  for (const auto& o : m.orgs) {
    const store::PlanRecord& p = o.plan;
    const std::pair<const char*, std::optional<__int128>> limits[] = {
        {"concurrent_sandboxes", p.concurrent_sandboxes},
        {"cpu", p.cpu},
        {"memory_bytes",
         p.memory_mib ? std::optional<__int128>(__int128{*p.memory_mib} << 20) : std::nullopt},
        {"max_run_seconds", p.max_run_seconds},
        {"persistent_storage_bytes",
         p.persistent_storage_gib
             ? std::optional<__int128>(__int128{*p.persistent_storage_gib} << 30)
             : std::nullopt},
        {"object_storage_bytes",
         p.object_storage_gib ? std::optional<__int128>(__int128{*p.object_storage_gib} << 30)
                              : std::nullopt},
        {"gpus", p.gpus},
        {"automations", p.automations},
        {"queued_jobs", p.queued_jobs},
        {"endpoints", p.endpoints},
        {"app_replicas", p.app_replicas}};
    for (const auto& [limit, value] : limits)
      if (value)
        out.Sample("adapt_plan_limit",
                   OrgLabel(o.org_id) + ",plan=\"" + Label(p.id) + "\",limit=\"" + limit + "\"",
                   Decimal(*value, 0));
  }
  out.Family("adapt_sandboxes", "gauge", "Sandboxes that are not deleted, by status.");
  for (const auto& [key, count] : m.sandboxes)
    out.Sample("adapt_sandboxes", OrgLabel(key.first) + ",status=\"" + Label(key.second) + "\"",
               std::to_string(count));
  HttpResponse r;
  r.status = 200;
  r.content_type = "text/plain; version=0.0.4; charset=utf-8";
  r.body = out.Take();
  return r;
}

}  // namespace

void AddMetricsRoutes(Router& router, core::AccountService& accounts) {
  router.Add("GET", "/metrics",
             [&](const HttpRequest&, const PathParams&, const core::Principal& who) {
               auto snapshot = accounts.Metrics(who);
               if (!snapshot.ok()) return ErrorResponse(snapshot.status());
               return Render(*snapshot);
             });
}

}  // namespace adapt::api
