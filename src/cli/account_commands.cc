// adapt account [register|ledger|usage]: the caller's plan, limits, usage and balance, its
// ledger (or the export as JSON lines / CSV) and its metered usage per sandbox, job and volume.
// adapt admin plan ls|get|set|assign, adapt admin credit (admin key; adaptd answers 403 to
// other keys).
#include <fstream>
#include <memory>
#include <ostream>
#include <sstream>

#include "base/json_parse.h"
#include "base/nano_amount.h"
#include "base/percent.h"
#include "cli/commands.h"
#include "cli/list_page_options.h"
#include "cli/output.h"

namespace adapt::cli {
namespace {

using nlohmann::json;

std::string Cell(const json& object, const char* name) {
  return object.is_object() && object.contains(name) ? JsonCell(object[name]) : std::string();
}

std::string LimitCell(const json& limits, const char* name) {
  if (!limits.is_object() || !limits.contains(name) || limits[name].is_null()) return "no limit";
  return JsonCell(limits[name]);
}

std::string DescribePlan(const json& plan) {
  const json limits = plan.value("limits", json::object());
  const json prices = plan.value("prices", json::object());
  std::vector<std::pair<std::string, std::string>> fields = {{"id", Cell(plan, "id")},
                                                             {"name", Cell(plan, "name")}};
  if (limits.is_object())
    for (const auto& [key, _] : limits.items())
      fields.push_back({"limits." + key, LimitCell(limits, key.c_str())});
  if (prices.is_object())
    for (const auto& [key, value] : prices.items())
      fields.push_back({"prices." + key, JsonCell(value)});
  return FormatFields(fields);
}

// "balance_80 at 2026-12-01T10:00:00.000Z, ..." (newest first), or "none".
std::string Alerts(const json& a) {
  std::string out;
  for (const json& alert : a.value("alerts", json::array()))
    out += (out.empty() ? "" : ", ") + Cell(alert, "kind") + " at " + Cell(alert, "at");
  return out.empty() ? "none" : out;
}

std::string DescribeAccount(const json& a) {
  const json plan = a.value("plan", json::object());
  const json limits = plan.is_object() ? plan.value("limits", json::object()) : json::object();
  const json usage = a.value("usage", json::object());
  auto used = [&](const char* name) { return Cell(usage, name); };
  auto of = [&](const char* use, const char* limit) {
    return used(use) + " of " + LimitCell(limits, limit);
  };
  std::string balance;
  if (a.contains("balanceNanos") && a["balanceNanos"].is_number_integer())
    balance = FormatNanoAmount(a["balanceNanos"].get<int64_t>());
  return FormatFields(
      {{"account", Cell(a, "orgId") + " (" + Cell(a, "orgName") + ")"},
       {"registered", Cell(a, "registered")},
       {"termsVersion", Cell(a, "termsVersion")},
       {"plan", Cell(plan, "id") + " (" + Cell(plan, "name") + ")"},
       {"sandboxes", of("sandboxes", "concurrentSandboxes")},
       {"cpu", of("cpu", "cpu")},
       {"memoryMiB", of("memoryMiB", "memoryMiB")},
       {"maxRunSeconds", LimitCell(limits, "maxRunSeconds")},
       {"persistentStorageMiB", used("persistentStorageMiB") + " (limit GiB: " +
                                    LimitCell(limits, "persistentStorageGiB") + ")"},
       {"objectStorageBytes",
        used("objectStorageBytes") + " (limit GiB: " + LimitCell(limits, "objectStorageGiB") + ")"},
       {"endpoints", of("endpoints", "endpoints")},
       {"gpus", LimitCell(limits, "gpus")},
       {"balance", balance},
       {"alerts", Alerts(a)}});
}

void AddAccount(CLI::App& app, Invocation& invocation) {
  CLI::App* account =
      app.add_subcommand("account", "Show this key's account: plan, limits, usage, balance");
  account->require_subcommand(0, 1);
  CLI::App* reg = account->add_subcommand(
      "register", "Register this key's organization (accept the terms; idempotent)");
  auto show = [&invocation](bool registering) {
    invocation.run = [registering, &invocation](const ApiClient& client, const Console& console) {
      ASSIGN_OR_RETURN(json a,
                       JsonOrError(registering ? client.Post("/v1/account/register", json::object())
                                               : client.Get("/v1/account")));
      console.out << (invocation.json ? PrettyJson(a) : DescribeAccount(a));
      return Status::Ok();
    };
  };
  CLI::App* ledger = account->add_subcommand("ledger", "List this account's ledger entries");
  auto format = std::make_shared<std::string>("table");
  ledger
      ->add_option("--format", *format,
                   "table, jsonl or csv (the export for a billing system) [table]")
      ->check(CLI::IsMember({"table", "jsonl", "csv"}));
  CLI::App* usage = account->add_subcommand(
      "usage", "Show usage per sandbox, job, run and volume (from the start of this month)");
  auto range = std::make_shared<std::pair<std::string, std::string>>();
  usage->add_option("--from", range->first, "UTC time or date, e.g. 2026-12-01 [this month]");
  usage->add_option("--to", range->second, "UTC time or date [now]");
  reg->callback([show] { show(true); });
  usage->callback([range, &invocation] {
    invocation.run = [range, &invocation](const ApiClient& client, const Console& console) {
      std::string query;
      if (!range->first.empty()) query += "from=" + PercentEncode(range->first);
      if (!range->second.empty())
        query += (query.empty() ? "" : "&") + std::string("to=") + PercentEncode(range->second);
      ASSIGN_OR_RETURN(json u, JsonOrError(client.Get("/v1/account/usage" +
                                                      (query.empty() ? "" : "?" + query))));
      if (invocation.json) {
        console.out << PrettyJson(u);
        return Status::Ok();
      }
      std::vector<TableRow> rows;
      auto text = [](const json& item, const char* key) {
        return item.value(key, json()).is_string() ? item[key].get<std::string>() : "";
      };
      auto add = [&](const json& item, const std::string& what) {
        std::string amount;
        if (item.contains("amountNanos") && item["amountNanos"].is_number_integer())
          amount = FormatNanoAmount(item["amountNanos"].get<int64_t>());
        rows.push_back({what, text(item, "jobId"), text(item, "runId"),
                        Cell(item, "cpuMilliseconds"), Cell(item, "memoryMiBMilliseconds"),
                        Cell(item, "storageMiBMilliseconds"), amount});
      };
      for (const json& item : u.value("items", json::array()))
        add(item, Cell(item, "subjectKind") + " " + Cell(item, "subjectId"));
      add(u.value("total", json::object()), "total");
      console.out << "from " << Cell(u, "from") << " to " << Cell(u, "to") << "\n"
                  << FormatTable({"SUBJECT", "JOB", "RUN", "CPU_MS", "MEMORY_MIB_MS",
                                  "STORAGE_MIB_MS", "AMOUNT"},
                                 rows);
      return Status::Ok();
    };
  });
  ledger->callback([format, &invocation] {
    invocation.run = [format, &invocation](const ApiClient& client, const Console& console) {
      if (*format != "table") {
        ASSIGN_OR_RETURN(HttpResponse r, client.Get("/v1/account/ledger?format=" + *format));
        RETURN_IF_ERROR(ErrorFromResponse(r));
        console.out << r.body;
        return Status::Ok();
      }
      // Every page, oldest first, as one list.
      json page = {{"items", json::array()}, {"nextCursor", nullptr}};
      std::string cursor;
      do {
        ASSIGN_OR_RETURN(
            json next,
            JsonOrError(client.Get("/v1/account/ledger" +
                                   QueryString({{"limit", "200"}, {"cursor", cursor}}))));
        for (json& e : next.value("items", json::array())) page["items"].push_back(std::move(e));
        cursor = next.value("nextCursor", json()).is_string()
                     ? next["nextCursor"].get<std::string>()
                     : "";
      } while (!cursor.empty());
      if (invocation.json) {
        console.out << PrettyJson(page);
        return Status::Ok();
      }
      std::vector<TableRow> rows;
      for (const json& e : page.value("items", json::array())) {
        std::string amount;
        if (e.contains("amountNanos") && e["amountNanos"].is_number_integer())
          amount = FormatNanoAmount(e["amountNanos"].get<int64_t>());
        rows.push_back({Cell(e, "createdAt"), Cell(e, "kind"), amount, Cell(e, "reason"),
                        Cell(e, "expiresAt"), Cell(e, "id")});
      }
      console.out << FormatTable({"CREATED", "KIND", "AMOUNT", "REASON", "EXPIRES", "ID"}, rows);
      return Status::Ok();
    };
  });
  account->callback([show, reg, ledger, usage] {
    if (!reg->parsed() && !ledger->parsed() && !usage->parsed()) show(false);
  });
}

struct PlanSetOptions {
  std::string id;
  std::string file;
  std::string name;
  std::vector<std::string> limits;  // KEY=N or KEY=none
  std::vector<std::string> prices;  // KEY=NANOS
};

Result<json> ReadPlanFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(Code::kInvalidArgument, "cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  ASSIGN_OR_RETURN(json plan, ParseJson(text.str(), path));
  if (!plan.is_object()) return Status(Code::kInvalidArgument, path + " must hold a JSON object");
  return plan;
}

// "cpu=8" into plan[section]["cpu"] = 8; "cpu=none" into null.
Status ApplySetting(json& plan, const char* section, const std::string& setting) {
  size_t eq = setting.find('=');
  if (eq == std::string::npos || eq == 0)
    return InvalidArgument(std::string("--") + (section[0] == 'l' ? "limit" : "price"),
                           "'" + setting + "' is not KEY=VALUE");
  std::string key = setting.substr(0, eq), value = setting.substr(eq + 1);
  if (!plan.contains(section) || !plan[section].is_object()) plan[section] = json::object();
  if (value == "none") {
    plan[section][key] = nullptr;
    return Status::Ok();
  }
  char* end = nullptr;
  long long n = std::strtoll(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0')
    return InvalidArgument(
        key, key + " must be an integer" + (section[0] == 'l' ? std::string(" or none") : ""));
  plan[section][key] = n;
  return Status::Ok();
}

void AddPlanSet(CLI::App& group, Invocation& invocation) {
  auto o = std::make_shared<PlanSetOptions>();
  CLI::App* set = group.add_subcommand(
      "set", "Create or change a plan (starts from the stored plan when there is one)");
  set->add_option("id", o->id, "plan id")->required();
  set->add_option("--file", o->file, "JSON plan {name, limits, prices}, as GET /v1/plans/ID");
  set->add_option("--name", o->name, "display name");
  set->add_option("--limit", o->limits,
                  "KEY=N or KEY=none, e.g. concurrentSandboxes=10, memoryMiB=8192");
  set->add_option("--price", o->prices, "KEY=NANOS, e.g. cpuSecondNanos=10000");
  set->callback([o, &invocation] {
    invocation.run = [o, &invocation](const ApiClient& client, const Console& console) {
      json plan = json::object();
      auto stored = client.Get("/v1/plans/" + o->id);
      if (stored.ok() && stored->status == 200) {
        ASSIGN_OR_RETURN(plan, JsonOrError(stored));
        plan.erase("updatedAt");
      } else if (stored.ok() && stored->status != 404) {
        RETURN_IF_ERROR(JsonOrError(stored).status());
      }
      if (!o->file.empty()) {
        ASSIGN_OR_RETURN(json given, ReadPlanFile(o->file));
        for (const auto& [key, value] : given.items()) plan[key] = value;
      }
      if (!o->name.empty()) plan["name"] = o->name;
      for (const auto& s : o->limits) RETURN_IF_ERROR(ApplySetting(plan, "limits", s));
      for (const auto& s : o->prices) RETURN_IF_ERROR(ApplySetting(plan, "prices", s));
      plan["id"] = o->id;
      ASSIGN_OR_RETURN(json saved, JsonOrError(client.Put("/v1/plans/" + o->id, plan)));
      console.out << (invocation.json ? PrettyJson(saved) : DescribePlan(saved));
      return Status::Ok();
    };
  });
}

void AddPlanCommands(CLI::App& admin, Invocation& invocation) {
  CLI::App* plan = admin.add_subcommand("plan", "Plans: limits and prices (admin key)");
  plan->require_subcommand(1);
  CLI::App* ls = plan->add_subcommand("ls", "List plans, by id");
  auto ls_page = AddListPageOptions(*ls);
  ls->callback([ls_page, &invocation] {
    invocation.run = [ls_page, &invocation](const ApiClient& client, const Console& console) {
      ASSIGN_OR_RETURN(json page, JsonOrError(client.Get(ListPagePath("/v1/plans", *ls_page))));
      if (invocation.json) {
        console.out << PrettyJson(page);
        return Status::Ok();
      }
      std::vector<TableRow> rows;
      for (const json& p : page.value("items", json::array())) {
        const json limits = p.value("limits", json::object());
        rows.push_back({Cell(p, "id"), Cell(p, "name"), LimitCell(limits, "concurrentSandboxes"),
                        LimitCell(limits, "cpu"), LimitCell(limits, "memoryMiB"),
                        LimitCell(limits, "maxRunSeconds")});
      }
      console.out << FormatTable({"ID", "NAME", "SANDBOXES", "CPU", "MEMORY MIB", "MAX RUN S"},
                                 rows)
                  << FormatNextCursor(page);
      return Status::Ok();
    };
  });
  auto id = std::make_shared<std::string>();
  CLI::App* get = plan->add_subcommand("get", "Show one plan");
  get->add_option("id", *id, "plan id")->required();
  get->callback([id, &invocation] {
    invocation.run = [id, &invocation](const ApiClient& client, const Console& console) {
      ASSIGN_OR_RETURN(json p, JsonOrError(client.Get("/v1/plans/" + *id)));
      console.out << (invocation.json ? PrettyJson(p) : DescribePlan(p));
      return Status::Ok();
    };
  });
  AddPlanSet(*plan, invocation);
  auto assign = std::make_shared<std::pair<std::string, std::string>>();
  CLI::App* as = plan->add_subcommand("assign", "Put an organization on a plan");
  as->add_option("org", assign->first, "organization id")->required();
  as->add_option("plan", assign->second, "plan id")->required();
  as->callback([assign, &invocation] {
    invocation.run = [assign, &invocation](const ApiClient& client, const Console& console) {
      ASSIGN_OR_RETURN(json a, JsonOrError(client.Put("/v1/orgs/" + assign->first + "/plan",
                                                      {{"planId", assign->second}})));
      console.out << (invocation.json ? PrettyJson(a) : DescribeAccount(a));
      return Status::Ok();
    };
  });
}

struct CreditOptions {
  std::string org;
  std::string amount;
  std::string reason;
  int expires_in_days = 0;
  std::string id;
  json body;
};

void AddCredit(CLI::App& admin, Invocation& invocation) {
  auto o = std::make_shared<CreditOptions>();
  CLI::App* credit = admin.add_subcommand("credit", "Add prepaid credit to an organization");
  credit->add_option("org", o->org, "organization id")->required();
  credit->add_option("amount", o->amount, "amount in the currency, e.g. 25 or 12.50")->required();
  credit->add_option("--reason", o->reason, "why (kept in the ledger)")->required();
  credit->add_option("--expires-in-days", o->expires_in_days, "the credit lapses after N days");
  credit->add_option("--id", o->id, "ledger entry id: a retry with the same id adds nothing");
  credit->callback([o, &invocation] {
    invocation.prepare = [o](const Console&) -> Status {
      ASSIGN_OR_RETURN(int64_t nanos, ParseNanoAmount(o->amount, "amount"));
      if (nanos == 0) return InvalidArgument("amount", "amount must be more than 0");
      o->body = {{"amountNanos", nanos}, {"reason", o->reason}};
      if (o->expires_in_days) o->body["expiresInDays"] = o->expires_in_days;
      if (!o->id.empty()) o->body["id"] = o->id;
      return Status::Ok();
    };
    invocation.run = [o, &invocation](const ApiClient& client, const Console& console) {
      ASSIGN_OR_RETURN(json entry,
                       JsonOrError(client.Post("/v1/orgs/" + o->org + "/credits", o->body)));
      if (invocation.json) {
        console.out << PrettyJson(entry);
        return Status::Ok();
      }
      std::string amount;
      if (entry.contains("amountNanos") && entry["amountNanos"].is_number_integer())
        amount = FormatNanoAmount(entry["amountNanos"].get<int64_t>());
      console.out << FormatFields({{"id", Cell(entry, "id")},
                                   {"orgId", Cell(entry, "orgId")},
                                   {"amount", amount},
                                   {"reason", Cell(entry, "reason")},
                                   {"expiresAt", Cell(entry, "expiresAt")}});
      return Status::Ok();
    };
  });
}

}  // namespace

void AddAccountCommands(CLI::App& app, Invocation& invocation) {
  AddAccount(app, invocation);
  CLI::App* admin = app.add_subcommand("admin", "Operator commands (admin key)");
  admin->require_subcommand(1);
  AddPlanCommands(*admin, invocation);
  AddCredit(*admin, invocation);
}

}  // namespace adapt::cli
