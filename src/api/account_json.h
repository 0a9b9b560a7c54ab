// REST's vocabulary for plans and accounts (camelCase, memory in MiB, money in nano-units):
// the one mapping, used by /v1/account, /v1/plans and the daemon's --plans-file.
#pragma once

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "core/account_service.h"

namespace adapt::api {

nlohmann::json PlanToJson(const store::PlanRecord& plan);
// The body of PUT /v1/plans/{id} and one entry of --plans-file: {id?, name, limits, prices}.
// A limit absent or null is no limit; a price absent is 0. Unknown fields and wrong types
// are InvalidArgument naming the field. `id`, when not empty, is the plan's (from the path).
Result<store::PlanRecord> PlanFromJson(const nlohmann::json& body, const std::string& id);
// --plans-file's text: {"plans": [plan, ...]}.
Result<std::vector<store::PlanRecord>> PlansFileFromJson(const std::string& text);

nlohmann::json AccountToJson(const core::Account& account);
// Usage entries add their subject, period and quantities.
nlohmann::json LedgerEntryToJson(const store::LedgerEntryRecord& entry);
// The balance and limit alerts, newest first: a limit's in the plan's units (`limitValue`;
// `used` in MiB for persistentStorageGiB, bytes for objectStorageGiB).
nlohmann::json AlertsToJson(const core::Account& account);
nlohmann::json AccountUsageToJson(const core::AccountUsage& usage);
// A plan limit's REST name ("persistentStorageGiB") for its store name.
std::string LimitWireName(const std::string& limit);
// The data of an `event: alert` frame of /v1/events (EventRecord::alert): {type, limit (null
// for a credit alert), value, used, at}; a credit alert's value and used are the credits and
// the usage in nano-units, a limit's as in AlertsToJson.
nlohmann::json AlertEventToJson(const store::EventRecord& event);

}  // namespace adapt::api
