// adapt job submit|ls|cancel|rm and adapt run ls|get|cancel: one-shot jobs and their runs.
#include <memory>
#include <ostream>

#include "base/key_value.h"
#include "cli/commands.h"
#include "cli/list_page_options.h"
#include "cli/output.h"
#include "cli/record_view.h"

namespace adapt::cli {
namespace {

using nlohmann::json;

struct SubmitOptions {
  std::string image;
  std::string cwd;
  std::vector<std::string> env;
  std::vector<std::string> secrets;
  std::string egress;
  std::string idempotency_key;
  int64_t cpu = 0;
  int64_t memory_mib = 0;
  int timeout = 0;
  int max_attempts = 0;
  json body;
};

void PrintJob(const json& job, const Console& console) {
  console.out << FormatFields({{"id", JsonCell(job.value("id", json()))},
                               {"status", JsonCell(job.value("status", json()))},
                               {"attempts", JsonCell(job.value("attempts", json())) + "/" +
                                                JsonCell(job.value("maxAttempts", json()))},
                               {"last run", JsonCell(job.value("lastRunId", json()))},
                               {"exit code", JsonCell(job.value("exitCode", json()))}});
}

void AddSubmit(CLI::App& group, Invocation& invocation) {
  auto o = std::make_shared<SubmitOptions>();
  CLI::App* submit = group.add_subcommand(
      "submit",
      "Run a command once in a fresh instant sandbox: adapt job submit [OPTIONS] -- ARGV...");
  submit->add_option("--image", o->image, "image or environment alias (default: adaptd's)");
  submit->add_option("--cpu", o->cpu, "vCPUs");
  submit->add_option("--memory", o->memory_mib, "memory in MiB")->type_name("MIB");
  submit->add_option("--env", o->env, "environment variable, repeatable")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  submit->add_option("--secret", o->secrets, "organization secret to attach, repeatable")
      ->allow_extra_args(false);
  submit->add_option("--egress", o->egress, "outbound network: open or none");
  submit->add_option("--cwd", o->cwd, "working directory")->type_name("DIR");
  submit->add_option("--timeout", o->timeout, "seconds the command (and its sandbox) may run")
      ->type_name("SECONDS");
  submit->add_option("--max-attempts", o->max_attempts,
                     "attempts for infrastructure failures (1-10, default 3)");
  submit->add_option("--idempotency-key", o->idempotency_key,
                     "a repeat with the same key returns the same job");
  submit->callback([o, &invocation] {
    invocation.accepts_trailing_args = true;
    invocation.prepare = [o, &invocation](const Console&) -> Status {
      if (!invocation.has_trailing_args || invocation.trailing_args.empty())
        return Status(Code::kInvalidArgument, "give the command after --");
      json& body = o->body;
      body = {{"argv", invocation.trailing_args}};
      if (!o->image.empty()) body["image"] = o->image;
      if (o->cpu) body["cpu"] = o->cpu;
      if (o->memory_mib) body["memoryMiB"] = o->memory_mib;
      if (!o->cwd.empty()) body["cwd"] = o->cwd;
      if (o->timeout) body["timeoutSeconds"] = o->timeout;
      if (o->max_attempts) body["maxAttempts"] = o->max_attempts;
      if (!o->egress.empty()) body["network"] = {{"egress", o->egress}};
      if (!o->secrets.empty()) body["secrets"] = o->secrets;
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
      ASSIGN_OR_RETURN(json job, JsonOrError(client.Post("/v1/jobs", o->body,
                                                         IdempotencyHeaders(o->idempotency_key))));
      if (invocation.json) {
        console.out << PrettyJson(job);
      } else {
        PrintJob(job, console);
      }
      return Status::Ok();
    };
  });
}

void AddJobList(CLI::App& group, Invocation& invocation) {
  CLI::App* ls = group.add_subcommand("ls", "List the organization's jobs, newest first");
  auto ls_page = AddListPageOptions(*ls);
  ls->callback([ls_page, &invocation] {
    invocation.run = [ls_page, &invocation](const ApiClient& client, const Console& console) {
      ASSIGN_OR_RETURN(json page, JsonOrError(client.Get(ListPagePath("/v1/jobs", *ls_page))));
      if (invocation.json) {
        console.out << PrettyJson(page);
        return Status::Ok();
      }
      std::vector<TableRow> rows;
      for (const auto& j : page.value("items", json::array()))
        rows.push_back({JsonCell(j.value("id", json())), JsonCell(j.value("status", json())),
                        JsonCell(j.value("attempts", json())),
                        JsonCell(j.value("exitCode", json())),
                        JsonCell(j.value("createdAt", json()))});
      console.out << FormatTable({"ID", "STATUS", "ATTEMPTS", "EXIT", "CREATED"}, rows)
                  << FormatNextCursor(page);
      return Status::Ok();
    };
  });
}

void AddJobVerb(CLI::App& group, Invocation& invocation, const std::string& verb) {
  auto id = std::make_shared<std::string>();
  const char* help = verb == "cancel"
                         ? "Keep a queued job from starting (cancel a running "
                           "attempt with adapt run cancel RUN_ID)"
                         : "Delete an ended job's record (its runs expire on their own)";
  CLI::App* sub = group.add_subcommand(verb, help);
  sub->add_option("id", *id, "job id")->required();
  sub->callback([id, verb, &invocation] {
    invocation.run = [id, verb, &invocation](const ApiClient& client, const Console& console) {
      std::string path = "/v1/jobs/" + EscapeUrlComponent(*id);
      if (verb == "rm") {
        RETURN_IF_ERROR(JsonOrError(client.Delete(path)).status());
        console.out << "deleted " << *id << "\n";
        return Status::Ok();
      }
      ASSIGN_OR_RETURN(json job, JsonOrError(client.Post(path + "/cancel", json::object())));
      if (invocation.json) {
        console.out << PrettyJson(job);
      } else {
        PrintJob(job, console);
      }
      return Status::Ok();
    };
  });
}

void AddRunList(CLI::App& group, Invocation& invocation) {
  struct Options {
    std::string job, automation;
  };
  auto o = std::make_shared<Options>();
  CLI::App* ls = group.add_subcommand("ls", "List runs, newest first");
  ls->add_option("--job", o->job, "only this job's runs");
  ls->add_option("--automation", o->automation, "only this automation's runs");
  auto ls_page = AddListPageOptions(*ls);
  ls->callback([o, ls_page, &invocation] {
    invocation.run = [o, ls_page, &invocation](const ApiClient& client, const Console& console) {
      ASSIGN_OR_RETURN(
          json page,
          JsonOrError(client.Get(ListPagePath(
              "/v1/runs", *ls_page, {{"jobId", o->job}, {"automationId", o->automation}}))));
      if (invocation.json) {
        console.out << PrettyJson(page);
        return Status::Ok();
      }
      std::vector<TableRow> rows;
      for (const auto& r : page.value("items", json::array()))
        rows.push_back({JsonCell(r.value("id", json())), JsonCell(r.value("jobId", json())),
                        JsonCell(r.value("trigger", json())), JsonCell(r.value("attempt", json())),
                        JsonCell(r.value("status", json())),
                        JsonCell(r.value("exitCode", json()))});
      console.out << FormatTable({"ID", "JOB", "TRIGGER", "ATTEMPT", "STATUS", "EXIT"}, rows)
                  << FormatNextCursor(page);
      return Status::Ok();
    };
  });
}

void AddRunVerb(CLI::App& group, Invocation& invocation, const std::string& verb) {
  auto id = std::make_shared<std::string>();
  CLI::App* sub = group.add_subcommand(
      verb, verb == "cancel" ? "Cancel a running run (best effort: SIGTERM, SIGKILL after 10 s)"
                             : "Show one run and its output");
  sub->add_option("id", *id, "run id")->required();
  sub->callback([id, verb, &invocation] {
    invocation.run = [id, verb, &invocation](const ApiClient& client, const Console& console) {
      std::string path = "/v1/runs/" + EscapeUrlComponent(*id);
      ASSIGN_OR_RETURN(json run,
                       JsonOrError(verb == "cancel" ? client.Post(path + "/cancel", json::object())
                                                    : client.Get(path)));
      console.out << (invocation.json ? PrettyJson(run) : DescribeRecord(run));
      return Status::Ok();
    };
  });
}

}  // namespace

void AddJobCommands(CLI::App& app, Invocation& invocation) {
  CLI::App* jobs = app.add_subcommand("job", "Run one-shot jobs in fresh instant sandboxes");
  jobs->require_subcommand(1);
  AddSubmit(*jobs, invocation);
  AddJobList(*jobs, invocation);
  AddJobVerb(*jobs, invocation, "cancel");
  AddJobVerb(*jobs, invocation, "rm");
  CLI::App* runs = app.add_subcommand("run", "Inspect and cancel the runs of jobs");
  runs->require_subcommand(1);
  AddRunList(*runs, invocation);
  AddRunVerb(*runs, invocation, "get");
  AddRunVerb(*runs, invocation, "cancel");
}

}  // namespace adapt::cli
