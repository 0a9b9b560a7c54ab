#include "api/account_json.h"

#include "base/json_parse.h"
#include "base/time.h"

namespace adapt::api {
namespace {

using nlohmann::json;

constexpr size_t kAlertsShown = 10;

struct LimitField {
  const char* wire;
  std::optional<int64_t> store::PlanRecord::*member;
};

constexpr LimitField kLimits[] = {
    {"concurrentSandboxes", &store::PlanRecord::concurrent_sandboxes},
    {"cpu", &store::PlanRecord::cpu},
    {"memoryMiB", &store::PlanRecord::memory_mib},
    {"maxRunSeconds", &store::PlanRecord::max_run_seconds},
    {"persistentStorageGiB", &store::PlanRecord::persistent_storage_gib},
    {"objectStorageGiB", &store::PlanRecord::object_storage_gib},
    {"gpus", &store::PlanRecord::gpus},
    {"automations", &store::PlanRecord::automations},
    {"queuedJobs", &store::PlanRecord::queued_jobs},
    {"endpoints", &store::PlanRecord::endpoints},
    {"databaseMiB", &store::PlanRecord::database_mib},
    {"databaseConnections", &store::PlanRecord::database_connections},
    {"appReplicas", &store::PlanRecord::app_replicas}};

struct PriceField {
  const char* wire;
  int64_t store::PlanRecord::*member;
};

constexpr PriceField kPrices[] = {
    {"cpuSecondNanos", &store::PlanRecord::cpu_second_nanos},
    {"memoryGiBSecondNanos", &store::PlanRecord::memory_gib_second_nanos},
    {"storageGiBMonthNanos", &store::PlanRecord::storage_gib_month_nanos},
    {"gpuSecondNanos", &store::PlanRecord::gpu_second_nanos}};

// The store's field names (what ValidatePlan reports) in REST's words.
std::string WireField(const std::string& field) {
  static const std::pair<const char*, const char*> kNames[] = {
      {"concurrent_sandboxes", "limits.concurrentSandboxes"},
      {"cpu", "limits.cpu"},
      {"memory_mib", "limits.memoryMiB"},
      {"max_run_seconds", "limits.maxRunSeconds"},
      {"persistent_storage_gib", "limits.persistentStorageGiB"},
      {"object_storage_gib", "limits.objectStorageGiB"},
      {"gpus", "limits.gpus"},
      {"automations", "limits.automations"},
      {"queued_jobs", "limits.queuedJobs"},
      {"endpoints", "limits.endpoints"},
      {"database_mib", "limits.databaseMiB"},
      {"database_connections", "limits.databaseConnections"},
      {"app_replicas", "limits.appReplicas"},
      {"cpu_second_nanos", "prices.cpuSecondNanos"},
      {"memory_gib_second_nanos", "prices.memoryGiBSecondNanos"},
      {"storage_gib_month_nanos", "prices.storageGiBMonthNanos"},
      {"gpu_second_nanos", "prices.gpuSecondNanos"}};
  for (const auto& [store_name, wire] : kNames)
    if (field == store_name) return wire;
  return field;
}

Status OnlyKeys(const json& object, const std::string& where,
                const std::vector<std::string>& known) {
  for (const auto& [key, _] : object.items()) {
    if (std::find(known.begin(), known.end(), key) == known.end())
      return InvalidArgument(where + key, "unknown field '" + where + key + "'");
  }
  return Status::Ok();
}

Result<const json*> OptionalObject(const json& body, const char* name) {
  if (!body.contains(name) || body[name].is_null()) return static_cast<const json*>(nullptr);
  if (!body[name].is_object())
    return InvalidArgument(name, std::string(name) + " must be an object");
  return &body[name];
}

// Limits and prices: integers, 0 or more.
Result<int64_t> WholeNumber(const json& v, const std::string& field) {
  if (!v.is_number_integer()) return InvalidArgument(field, field + " must be an integer");
  if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t{INT64_MAX})
    return InvalidArgument(field, field + " is too large");
  if (v.get<int64_t>() < 0) return InvalidArgument(field, field + " must be 0 or more");
  return v.get<int64_t>();
}

json Millis(int64_t at) { return at > 0 ? json(FormatRfc3339(at)) : json(nullptr); }

}  // namespace

json PlanToJson(const store::PlanRecord& p) {
  json limits = json::object();
  for (const auto& f : kLimits) {
    const auto& v = p.*(f.member);
    limits[f.wire] = v ? json(*v) : json(nullptr);
  }
  json prices = json::object();
  for (const auto& f : kPrices) prices[f.wire] = p.*(f.member);
  return {{"id", p.id},
          {"name", p.name},
          {"limits", limits},
          {"prices", prices},
          {"updatedAt", p.updated_at > 0 ? json(FormatRfc3339(p.updated_at)) : json(nullptr)}};
}

Result<store::PlanRecord> PlanFromJson(const json& body, const std::string& id) {
  if (!body.is_object()) return InvalidArgument("", "a plan must be a JSON object");
  RETURN_IF_ERROR(OnlyKeys(body, "", {"id", "name", "limits", "prices", "updatedAt"}));
  store::PlanRecord p;
  p.id = id;
  if (body.contains("id")) {
    if (!body["id"].is_string()) return InvalidArgument("id", "id must be a string");
    std::string given = body["id"];
    if (!id.empty() && given != id)
      return InvalidArgument("id", "id '" + given + "' differs from the path's '" + id + "'");
    p.id = given;
  }
  if (p.id.empty()) return InvalidArgument("id", "a plan needs an id");
  if (body.contains("name")) {
    if (!body["name"].is_string()) return InvalidArgument("name", "name must be a string");
    p.name = body["name"];
  }
  // Ignored, so that GET's answer can be sent back; a value of another type is a mistake.
  if (body.contains("updatedAt") && !body["updatedAt"].is_string() && !body["updatedAt"].is_null())
    return InvalidArgument("updatedAt", "updatedAt must be a string (it is ignored)");
  if (p.name.empty()) p.name = p.id;
  ASSIGN_OR_RETURN(const json* limits, OptionalObject(body, "limits"));
  if (limits) {
    std::vector<std::string> known;
    for (const auto& f : kLimits) known.push_back(f.wire);
    RETURN_IF_ERROR(OnlyKeys(*limits, "limits.", known));
    for (const auto& f : kLimits) {
      if (!limits->contains(f.wire) || (*limits)[f.wire].is_null()) continue;
      ASSIGN_OR_RETURN(p.*(f.member),
                       WholeNumber((*limits)[f.wire], std::string("limits.") + f.wire));
    }
  }
  ASSIGN_OR_RETURN(const json* prices, OptionalObject(body, "prices"));
  if (prices) {
    std::vector<std::string> known;
    for (const auto& f : kPrices) known.push_back(f.wire);
    RETURN_IF_ERROR(OnlyKeys(*prices, "prices.", known));
    for (const auto& f : kPrices) {
      if (!prices->contains(f.wire) || (*prices)[f.wire].is_null()) continue;
      ASSIGN_OR_RETURN(p.*(f.member),
                       WholeNumber((*prices)[f.wire], std::string("prices.") + f.wire));
    }
  }
  Status valid = core::ValidatePlan(p);
  if (!valid.ok()) return valid.WithField(WireField(valid.field()));
  return p;
}

Result<std::vector<store::PlanRecord>> PlansFileFromJson(const std::string& text) {
  ASSIGN_OR_RETURN(json doc, ParseJson(text, "the plans file"));
  if (!doc.is_object() || !doc.contains("plans") || !doc["plans"].is_array())
    return InvalidArgument("plans", "a plans file is {\"plans\": [...]}");
  RETURN_IF_ERROR(OnlyKeys(doc, "", {"plans"}));
  std::vector<store::PlanRecord> plans;
  for (size_t i = 0; i < doc["plans"].size(); ++i) {
    auto plan = PlanFromJson(doc["plans"][i], "");
    if (!plan.ok()) return plan.status().WithContext("plans[" + std::to_string(i) + "]");
    plans.push_back(*plan);
  }
  return plans;
}

json AccountToJson(const core::Account& a) {
  const auto& u = a.usage;
  return {{"orgId", a.org_id},
          {"orgName", a.org_name},
          {"registered", a.registered},
          {"termsVersion", a.registered ? json(a.terms_version) : json(nullptr)},
          {"registeredAt", a.registered ? Millis(a.registered_at) : json(nullptr)},
          {"plan", PlanToJson(a.plan)},
          {"usage",
           {{"sandboxes", u.sandboxes},
            {"runningSandboxes", u.running_sandboxes},
            {"cpu", u.cpu},
            {"memoryMiB", u.memory_mib},
            {"persistentStorageMiB", u.persistent_storage_mib},
            {"objectStorageBytes", u.object_storage_bytes},
            {"endpoints", u.endpoints}}},
          {"balanceNanos", a.balance_nanos},
          {"creditsNanos", a.credits_nanos},
          {"usageNanos", a.usage_nanos},
          {"alerts", AlertsToJson(a)}};
}

std::string LimitWireName(const std::string& limit) {
  std::string wire = WireField(limit);
  constexpr std::string_view kPrefix = "limits.";
  return wire.starts_with(kPrefix) ? wire.substr(kPrefix.size()) : wire;
}

json AlertEventToJson(const store::EventRecord& e) {
  return {{"type", e.status},
          {"limit", e.alert_limit.empty() ? json(nullptr) : json(LimitWireName(e.alert_limit))},
          {"value", e.alert_value},
          {"used", e.alert_used},
          {"at", FormatRfc3339(e.at)}};
}

json AlertsToJson(const core::Account& account) {
  json out = json::array();
  for (const auto& a : core::AlertsNewestFirst(account, kAlertsShown)) {
    json alert = {{"kind", a.kind}, {"at", FormatRfc3339(a.at)}};
    if (a.balance) {
      alert["creditsNanos"] = a.balance->credits_nanos;
      alert["usageNanos"] = a.balance->usage_nanos;
    } else {
      alert["limit"] = LimitWireName(a.limit->limit);
      alert["limitValue"] = a.limit->limit_value;
      alert["used"] = a.limit->used;
    }
    out.push_back(std::move(alert));
  }
  return out;
}

json UsageTotalToJson(const store::UsageTotalRecord& u) {
  json out = {{"cpuMilliseconds", u.cpu_millis},
              {"memoryMiBMilliseconds", u.memory_mib_millis},
              {"storageMiBMilliseconds", u.storage_mib_millis},
              {"gpuMilliseconds", u.gpu_millis},
              {"amountNanos", u.amount_nanos},
              {"entries", u.entries}};
  if (!u.subject_id.empty()) {
    out["subjectKind"] = u.subject_kind;
    out["subjectId"] = u.subject_id;
    out["jobId"] = u.job_id.empty() ? json(nullptr) : json(u.job_id);
    out["runId"] = u.run_id.empty() ? json(nullptr) : json(u.run_id);
  }
  return out;
}

json AccountUsageToJson(const core::AccountUsage& usage) {
  json items = json::array();
  for (const auto& u : usage.items) items.push_back(UsageTotalToJson(u));
  return {{"from", FormatRfc3339(usage.from)},
          {"to", FormatRfc3339(usage.to)},
          {"items", items},
          {"total", UsageTotalToJson(usage.total)}};
}

json LedgerEntryToJson(const store::LedgerEntryRecord& e) {
  json out = {{"id", e.id},
              {"orgId", e.org_id},
              {"kind", e.kind},
              {"amountNanos", e.amount_nanos},
              {"reason", e.reason},
              {"expiresAt", e.expires_at ? json(FormatRfc3339(*e.expires_at)) : json(nullptr)},
              {"createdAt", FormatRfc3339(e.created_at)}};
  if (e.kind != "usage") return out;
  out["subjectKind"] = e.subject_kind;
  out["subjectId"] = e.subject_id;
  out["periodStart"] = FormatRfc3339(e.period_start);
  out["periodEnd"] = FormatRfc3339(e.period_end);
  out["cpuMilliseconds"] = e.cpu_millis;
  out["memoryMiBMilliseconds"] = e.memory_mib_millis;
  out["storageMiBMilliseconds"] = e.storage_mib_millis;
  out["gpuMilliseconds"] = e.gpu_millis;
  return out;
}

}  // namespace adapt::api
