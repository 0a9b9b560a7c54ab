// adapt automation create|ls|get|enable|disable|rm|trigger: schedules that run a command in a
// sandbox of the organization, and controllers that hold one in a state (create --controller
// STATE); their runs: adapt run ls --automation ID.
#include "cli/automation_commands.h"

#include <memory>
#include <ostream>

#include "base/key_value.h"
#include "cli/list_page_options.h"
#include "cli/output.h"
#include "cli/record_view.h"

namespace adapt::cli {
namespace {

using nlohmann::json;

struct CreateAutomationOptions {
  std::string sandbox, name, cwd, cron, time_zone, overlap, controller;
  int64_t window = 0;
  std::vector<std::string> env;
  int64_t every = 0;
  int64_t timeout = 0;
  int64_t catch_up = -1;
  int64_t max_attempts = 0;
  std::string idempotency_key;
  json body;
};

void PrintAutomation(const json& a, const Console& console) {
  std::string next;
  for (const auto& t : a.value("nextRuns", json::array()))
    next += (next.empty() ? "" : ", ") + JsonCell(t);
  bool controller = a.value("kind", "") == "controller";
  bool scheduled =
      !a.value("cron", json()).is_null() || !a.value("intervalSeconds", json()).is_null();
  std::string schedule =
      a.value("cron", json()).is_null()
          ? "every " + JsonCell(a.value("intervalSeconds", json())) + "s"
          : JsonCell(a.value("cron", json())) + " (" + JsonCell(a.value("timeZone", json())) + ")";
  if (controller) {
    std::string desired = JsonCell(a.value("desiredState", json()));
    std::string holds = !scheduled
                            ? desired + ", always"
                            : desired + " for " + JsonCell(a.value("windowSeconds", json())) +
                                  "s from each slot of " + schedule + ", else the other";
    std::string changes;
    for (const auto& c : a.value("nextChanges", json::array()))
      changes += (changes.empty() ? "" : ", ") + JsonCell(c.value("state", json())) + " at " +
                 JsonCell(c.value("at", json()));
    console.out << FormatFields({{"id", JsonCell(a.value("id", json()))},
                                 {"name", JsonCell(a.value("name", json()))},
                                 {"kind", "controller"},
                                 {"sandbox", JsonCell(a.value("sandboxId", json()))},
                                 {"holds", holds},
                                 {"enabled", JsonCell(a.value("enabled", json()))},
                                 {"paused reason", JsonCell(a.value("pausedReason", json()))},
                                 {"version", JsonCell(a.value("version", json()))},
                                 {"next changes", changes.empty() ? "-" : changes}});
    return;
  }
  console.out << FormatFields({{"id", JsonCell(a.value("id", json()))},
                               {"name", JsonCell(a.value("name", json()))},
                               {"sandbox", JsonCell(a.value("sandboxId", json()))},
                               {"schedule", schedule},
                               {"enabled", JsonCell(a.value("enabled", json()))},
                               {"paused reason", JsonCell(a.value("pausedReason", json()))},
                               {"version", JsonCell(a.value("version", json()))},
                               {"next runs", next.empty() ? "-" : next}});
}

void AddAutomationCreate(CLI::App& group, Invocation& invocation) {
  auto o = std::make_shared<CreateAutomationOptions>();
  CLI::App* create = group.add_subcommand(
      "create",
      "Run a command in a sandbox on a schedule: adapt automation create --sandbox ID "
      "(--every SECONDS | --cron EXPR [--tz ZONE]) -- ARGV...; or hold it in a state: "
      "--controller running|hibernated [(--every SECONDS | --cron EXPR [--tz ZONE]) --window "
      "SECONDS]");
  create->add_option("--sandbox", o->sandbox, "the target sandbox")->required();
  create->add_option("--every", o->every, "run every SECONDS")->type_name("SECONDS");
  create->add_option("--cron", o->cron, "5-field cron expression")->type_name("EXPR");
  create->add_option("--tz", o->time_zone, "IANA time zone of --cron (default UTC)");
  create
      ->add_option("--controller", o->controller,
                   "a controller holding the sandbox running or hibernated (no command); with a "
                   "schedule, only inside its windows (the other state outside)")
      ->type_name("STATE");
  create
      ->add_option("--window", o->window,
                   "a controller's window length from each slot, e.g. --cron '0 9 * * mon-fri' "
                   "--window 32400 for 09:00-18:00 on weekdays")
      ->type_name("SECONDS");
  create->add_option("--name", o->name, "a name to recognize it by");
  create->add_option("--cwd", o->cwd, "working directory")->type_name("DIR");
  create->add_option("--env", o->env, "environment variable, repeatable")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  create->add_option("--timeout", o->timeout, "seconds each run's command may take")
      ->type_name("SECONDS");
  create->add_option("--idempotency-key", o->idempotency_key,
                     "retry-safe creation key (the same key and request: one automation)");
  create->add_option("--overlap", o->overlap,
                     "while a run executes: skip (default), buffer_one, allow or cancel_previous");
  create
      ->add_option("--catch-up", o->catch_up,
                   "after downtime, slots missed within SECONDS run once (default 3600)")
      ->type_name("SECONDS");
  create
      ->add_option("--max-attempts", o->max_attempts,
                   "attempts of one slot on an instant sandbox, retried in a fresh sandbox "
                   "after an infrastructure failure (1-10, default 3)")
      ->type_name("N");
  create->callback([o, &invocation] {
    invocation.accepts_trailing_args = true;
    invocation.prepare = [o, &invocation](const Console&) -> Status {
      bool has_command = invocation.has_trailing_args && !invocation.trailing_args.empty();
      json& body = o->body;
      if (!o->controller.empty()) {
        if (has_command)
          return Status(Code::kInvalidArgument, "a controller runs no command: drop it after --");
        body = {{"sandboxId", o->sandbox}, {"kind", "controller"}, {"desiredState", o->controller}};
        if (o->window) body["windowSeconds"] = o->window;
      } else {
        if (!has_command) return Status(Code::kInvalidArgument, "give the command after --");
        if (o->window)
          return Status(Code::kInvalidArgument, "--window is a controller's (--controller STATE)");
        body = {{"sandboxId", o->sandbox}, {"argv", invocation.trailing_args}};
      }
      if (o->every) body["intervalSeconds"] = o->every;
      if (!o->cron.empty()) body["cron"] = o->cron;
      if (!o->time_zone.empty()) body["timeZone"] = o->time_zone;
      if (!o->name.empty()) body["name"] = o->name;
      if (!o->cwd.empty()) body["cwd"] = o->cwd;
      if (o->timeout) body["timeoutSeconds"] = o->timeout;
      if (!o->overlap.empty()) body["overlap"] = o->overlap;
      if (o->catch_up >= 0) body["catchUpSeconds"] = o->catch_up;
      if (o->max_attempts) body["maxAttempts"] = o->max_attempts;
      if (!o->env.empty()) {
        json env = json::object();
        for (const auto& kv : o->env) {
          auto pair = SplitKeyValue(kv);
          if (!pair)
            return Status(Code::kInvalidArgument, "--env wants KEY=VALUE, got '" + kv + "'");
          env[pair->first] = pair->second;
        }
        body["env"] = env;
      }
      return Status::Ok();
    };
    invocation.run = [o, &invocation](const ApiClient& client, const Console& console) {
      ASSIGN_OR_RETURN(json a, JsonOrError(client.Post("/v1/automations", o->body,
                                                       IdempotencyHeaders(o->idempotency_key))));
      if (invocation.json) {
        console.out << PrettyJson(a);
      } else {
        PrintAutomation(a, console);
      }
      return Status::Ok();
    };
  });
}

void AddAutomationList(CLI::App& group, Invocation& invocation) {
  CLI::App* ls = group.add_subcommand("ls", "List the organization's automations, newest first");
  auto ls_page = AddListPageOptions(*ls);
  ls->callback([ls_page, &invocation] {
    invocation.run = [ls_page, &invocation](const ApiClient& client, const Console& console) {
      ASSIGN_OR_RETURN(json page,
                       JsonOrError(client.Get(ListPagePath("/v1/automations", *ls_page))));
      if (invocation.json) {
        console.out << PrettyJson(page);
        return Status::Ok();
      }
      std::vector<TableRow> rows;
      for (const auto& a : page.value("items", json::array())) {
        auto next = a.value("nextRuns", json::array());
        rows.push_back({JsonCell(a.value("id", json())), JsonCell(a.value("name", json())),
                        JsonCell(a.value("sandboxId", json())),
                        JsonCell(a.value("enabled", json())), JsonCell(a.value("version", json())),
                        next.empty() ? "-" : JsonCell(next[0])});
      }
      console.out << FormatTable({"ID", "NAME", "SANDBOX", "ENABLED", "VERSION", "NEXT RUN"}, rows)
                  << FormatNextCursor(page);
      return Status::Ok();
    };
  });
}

void AddAutomationVerb(CLI::App& group, Invocation& invocation, const std::string& verb,
                       const std::string& help) {
  auto id = std::make_shared<std::string>();
  auto version = std::make_shared<int64_t>(0);
  CLI::App* sub = group.add_subcommand(verb, help);
  sub->add_option("id", *id, "automation id")->required();
  if (verb == "enable" || verb == "disable")
    sub->add_option("--version", *version,
                    "only if the automation is still at this version (as get printed it)");
  sub->callback([id, version, verb, &invocation] {
    invocation.run = [id, version, verb, &invocation](const ApiClient& client,
                                                      const Console& console) {
      std::string path = "/v1/automations/" + EscapeUrlComponent(*id);
      if (verb == "rm") {
        RETURN_IF_ERROR(JsonOrError(client.Delete(path)).status());
        console.out << "deleted " << *id << " (its sandbox stays)\n";
        return Status::Ok();
      }
      if (verb == "trigger") {
        ASSIGN_OR_RETURN(json run, JsonOrError(client.Post(path + "/trigger", json::object())));
        console.out << (invocation.json ? PrettyJson(run) : DescribeRecord(run));
        return Status::Ok();
      }
      json a;
      if (verb == "get") {
        ASSIGN_OR_RETURN(a, JsonOrError(client.Get(path)));
      } else {
        HeaderList headers;
        if (*version) headers.push_back({"If-Match", "\"" + std::to_string(*version) + "\""});
        ASSIGN_OR_RETURN(a, JsonOrError(client.Post(path + "/" + verb, json::object(), headers)));
      }
      if (invocation.json) {
        console.out << PrettyJson(a);
      } else {
        PrintAutomation(a, console);
      }
      return Status::Ok();
    };
  });
}

}  // namespace

void AddAutomationCommands(CLI::App& app, Invocation& invocation) {
  CLI::App* group = app.add_subcommand(
      "automation", "Run commands in a sandbox on a schedule, or hold one running or hibernated");
  group->require_subcommand(1);
  AddAutomationCreate(*group, invocation);
  AddAutomationList(*group, invocation);
  AddAutomationVerb(*group, invocation, "get", "Show one automation and its next run times");
  AddAutomationVerb(*group, invocation, "enable", "Resume a paused automation (from now on)");
  AddAutomationVerb(*group, invocation, "disable", "Pause an automation");
  AddAutomationVerb(*group, invocation, "rm", "Delete an automation (never its sandbox)");
  AddAutomationVerb(*group, invocation, "trigger", "Run an automation's command now");
}

}  // namespace adapt::cli
