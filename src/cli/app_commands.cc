// adapt app deploy|ls|get|scale|rollback|rm|logs: deployed apps (/v1/apps).
#include <memory>
#include <optional>
#include <ostream>

#include "base/key_value.h"
#include "cli/commands.h"
#include "cli/list_page_options.h"
#include "cli/operation_wait.h"
#include "cli/output.h"

namespace adapt::cli {
namespace {

using nlohmann::json;

// "GET /healthz every 5 s, unready after 3 failures in a row"; "-" without a release.
std::string ReadinessCell(const json& release) {
  if (!release.is_object()) return "-";
  json path = release.value("readinessPath", json());
  return (path.is_string() ? "GET " + path.get<std::string>() : std::string("TCP connect")) +
         " every " + JsonCell(release.value("readinessPeriodSeconds", json())) +
         " s, unready after " + JsonCell(release.value("readinessFailureThreshold", json())) +
         " failures in a row";
}

void PrintApp(const json& app, const Console& console) {
  json release = app.value("release", json());
  console.out << FormatFields(
      {{"id", JsonCell(app.value("id", json()))},
       {"name", JsonCell(app.value("name", json()))},
       {"url", JsonCell(app.value("url", json()))},
       {"replicas", JsonCell(app.value("readyReplicas", json())) + "/" +
                        JsonCell(app.value("replicas", json())) + " ready"},
       {"status", JsonCell(app.value("status", json())) +
                      (app.value("statusMessage", json()).is_string()
                           ? ": " + app["statusMessage"].get<std::string>()
                           : "")},
       {"release", JsonCell(app.value("releaseId", json()))},
       {"readiness", ReadinessCell(release)},
       {"build exit code",
        release.is_object() ? JsonCell(release.value("buildExitCode", json())) : "-"}});
}

// What a deploy or a rollback answered: the app, or its operation (kind "app.deploy" or
// "app.rollback"), printed as it is with --no-wait and otherwise followed until it ends (its
// error when it failed, else the app as it is then); the app is printed.
Status ShowAppOrOperation(const ApiClient& client, const Console& console, bool as_json,
                          bool no_wait, json answer) {
  const std::string kind = answer.value("kind", "");
  if (kind == "app.deploy" || kind == "app.rollback") {  // an operation: the work goes on
    if (no_wait) {
      console.out << (as_json ? PrettyJson(answer) : OperationSummary(answer) + "\n");
      return Status::Ok();
    }
    // The build, the packaging and the replicas' readiness are bounded by adaptd.
    ASSIGN_OR_RETURN(json op,
                     WaitForOperation(client, answer.value("id", ""), std::chrono::hours(2)));
    RETURN_IF_ERROR(OperationOutcome(op));
    ASSIGN_OR_RETURN(
        answer, JsonOrError(client.Get("/v1/apps/" + EscapeUrlComponent(op.value("appId", "")))));
  }
  if (as_json) {
    console.out << PrettyJson(answer);
  } else {
    PrintApp(answer, console);
  }
  return Status::Ok();
}

// The server waits this long; a longer deploy or rollback answers its operation, polled here.
constexpr int kServerWaitSeconds = 20;

void AddDeploy(CLI::App& group, Invocation& invocation) {
  struct Options {
    std::string sandbox, name, source, build, build_path, start, readiness_path;
    std::string idempotency_key;
    int64_t port = 0;
    int64_t replicas = 1;
    int64_t readiness_timeout = 0;
    std::optional<int64_t> readiness_period, readiness_threshold;
    std::vector<std::string> env, secrets;
    bool no_wait = false;
    json body;
  };
  auto o = std::make_shared<Options>();
  CLI::App* deploy = group.add_subcommand(
      "deploy", "Publish a sandbox's files as an app on replicas behind one public URL");
  deploy->add_option("sandbox", o->sandbox, "the running source sandbox")->required();
  deploy->add_option("--start", o->start, "the command that serves, run from /workspace")
      ->required();
  deploy->add_option("--port", o->port, "where the start command listens")->required();
  deploy->add_option("--name", o->name, "a-z, 0-9 and '-' (default: app)");
  deploy->add_option("--source", o->source, "the path packaged (default: /workspace)");
  deploy->add_option("--build", o->build, "a build command run in the source sandbox first");
  deploy->add_option("--build-path", o->build_path, "where the build runs (default: --source)");
  deploy->add_option("--replicas", o->replicas, "replicas (default 1; the plan caps it)");
  deploy->add_option("--readiness-path", o->readiness_path,
                     "a replica serves once a GET of it answers 2xx/3xx (default: a TCP connect)");
  deploy->add_option("--readiness-timeout", o->readiness_timeout,
                     "seconds a replica may take to become ready (1-600, default 120)");
  deploy->add_option("--readiness-period", o->readiness_period,
                     "seconds between a ready replica's checks (1-300, default 5)");
  deploy->add_option("--readiness-threshold", o->readiness_threshold,
                     "failed checks in a row that take a ready replica's traffic until one "
                     "passes (1-10, default 3)");
  deploy->add_option("--env", o->env, "environment variable of the app, repeatable")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  deploy
      ->add_option("--secret", o->secrets,
                   "an organization secret the app sees as the variable of its name, "
                   "repeatable")
      ->type_name("NAME")
      ->allow_extra_args(false);
  deploy->add_option("--idempotency-key", o->idempotency_key,
                     "retry-safe deploy key (the same key and request: the same deploy, not "
                     "run again)");
  deploy->add_flag("--no-wait", o->no_wait,
                   "print the deploy's operation at once instead of waiting for the deploy "
                   "(adapt op get ID follows it)");
  deploy->callback([o, &invocation] {
    invocation.prepare = [o](const Console&) -> Status {
      json& body = o->body;
      body = {{"sandboxId", o->sandbox},
              {"startCommand", o->start},
              {"port", o->port},
              {"replicas", o->replicas}};
      if (!o->name.empty()) body["name"] = o->name;
      if (!o->source.empty()) body["sourcePath"] = o->source;
      if (!o->build.empty()) body["buildCommand"] = o->build;
      if (!o->build_path.empty()) body["buildPath"] = o->build_path;
      if (!o->readiness_path.empty()) body["readinessPath"] = o->readiness_path;
      if (o->readiness_timeout != 0) body["readinessTimeoutSeconds"] = o->readiness_timeout;
      if (o->readiness_period) body["readinessPeriodSeconds"] = *o->readiness_period;
      if (o->readiness_threshold) body["readinessFailureThreshold"] = *o->readiness_threshold;
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
      if (!o->secrets.empty()) body["secrets"] = o->secrets;
      body["waitSeconds"] = o->no_wait ? 0 : kServerWaitSeconds;
      return Status::Ok();
    };
    invocation.run = [o, &invocation](const ApiClient& client, const Console& console) {
      ASSIGN_OR_RETURN(
          json answer,
          JsonOrError(client.Post("/v1/apps", o->body, IdempotencyHeaders(o->idempotency_key))));
      return ShowAppOrOperation(client, console, invocation.json, o->no_wait, answer);
    };
  });
}

void AddRollback(CLI::App& group, Invocation& invocation) {
  struct Options {
    std::string id, release;
    bool no_wait = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* rollback =
      group.add_subcommand("rollback", "Serve an earlier release again (default: the one before)");
  rollback->add_option("id", o->id, "app id")->required();
  rollback->add_option("release", o->release, "release id (rel_...)");
  rollback->add_flag("--no-wait", o->no_wait,
                     "print the rollback's operation at once instead of waiting for the rollout "
                     "(adapt op get ID follows it)");
  rollback->callback([o, &invocation] {
    invocation.run = [o, &invocation](const ApiClient& client, const Console& console) {
      json body = {{"waitSeconds", o->no_wait ? 0 : kServerWaitSeconds}};
      if (!o->release.empty()) body["releaseId"] = o->release;
      ASSIGN_OR_RETURN(
          json answer,
          JsonOrError(client.Post("/v1/apps/" + EscapeUrlComponent(o->id) + "/rollback", body)));
      return ShowAppOrOperation(client, console, invocation.json, o->no_wait, answer);
    };
  });
}

void AddAppList(CLI::App& group, Invocation& invocation) {
  CLI::App* ls = group.add_subcommand("ls", "List the organization's deployed apps, newest first");
  auto ls_page = AddListPageOptions(*ls);
  ls->callback([ls_page, &invocation] {
    invocation.run = [ls_page, &invocation](const ApiClient& client, const Console& console) {
      ASSIGN_OR_RETURN(json page, JsonOrError(client.Get(ListPagePath("/v1/apps", *ls_page))));
      if (invocation.json) {
        console.out << PrettyJson(page);
        return Status::Ok();
      }
      std::vector<TableRow> rows;
      for (const auto& a : page.value("items", json::array()))
        rows.push_back({JsonCell(a.value("id", json())), JsonCell(a.value("name", json())),
                        JsonCell(a.value("readyReplicas", json())) + "/" +
                            JsonCell(a.value("replicas", json())),
                        JsonCell(a.value("url", json()))});
      console.out << FormatTable({"ID", "NAME", "READY", "URL"}, rows) << FormatNextCursor(page);
      return Status::Ok();
    };
  });
}

void AddVerb(CLI::App& group, Invocation& invocation, const std::string& verb) {
  auto id = std::make_shared<std::string>();
  auto replicas = std::make_shared<int64_t>(0);
  const char* help = verb == "get"     ? "Show one deployed app"
                     : verb == "scale" ? "Set the number of replicas (0-10), applied at once"
                                       : "Delete an app's replicas, route and releases (the "
                                         "source sandbox stays)";
  CLI::App* sub = group.add_subcommand(verb, help);
  sub->add_option("id", *id, "app id")->required();
  if (verb == "scale") sub->add_option("replicas", *replicas, "replicas wanted")->required();
  sub->callback([id, replicas, verb, &invocation] {
    invocation.run = [id, replicas, verb, &invocation](const ApiClient& client,
                                                       const Console& console) {
      std::string path = "/v1/apps/" + EscapeUrlComponent(*id);
      if (verb == "rm") {
        RETURN_IF_ERROR(JsonOrError(client.Delete(path)).status());
        console.out << "deleted " << *id << "\n";
        return Status::Ok();
      }
      ASSIGN_OR_RETURN(
          json app,
          JsonOrError(verb == "scale" ? client.Post(path + "/scale", json{{"replicas", *replicas}})
                                      : client.Get(path)));
      if (invocation.json || verb == "get") {
        console.out << PrettyJson(app);
      } else {
        PrintApp(app, console);
      }
      return Status::Ok();
    };
  });
}

void AddLogs(CLI::App& group, Invocation& invocation) {
  auto id = std::make_shared<std::string>();
  CLI::App* logs = group.add_subcommand(
      "logs", "Show the latest output of each replica (and of the last one that failed)");
  logs->add_option("id", *id, "app id")->required();
  logs->callback([id, &invocation] {
    invocation.run = [id, &invocation](const ApiClient& client, const Console& console) {
      ASSIGN_OR_RETURN(json page,
                       JsonOrError(client.Get("/v1/apps/" + EscapeUrlComponent(*id) + "/logs")));
      if (invocation.json) {
        console.out << PrettyJson(page);
        return Status::Ok();
      }
      for (const auto& r : page.value("items", json::array())) {
        console.out << "== " << JsonCell(r.value("sandboxId", json())) << " ("
                    << JsonCell(r.value("state", json())) << ", release "
                    << JsonCell(r.value("releaseId", json())) << ") ==\n";
        for (const char* stream : {"stdout", "stderr"}) {
          std::string text = r.value(stream, "");
          console.out << text;
          if (!text.empty() && text.back() != '\n') console.out << "\n";
        }
      }
      return Status::Ok();
    };
  });
}

}  // namespace

void AddAppCommands(CLI::App& app, Invocation& invocation) {
  CLI::App* apps = app.add_subcommand("app", "Deploy apps from sandboxes behind public URLs");
  apps->require_subcommand(1);
  AddDeploy(*apps, invocation);
  AddAppList(*apps, invocation);
  AddVerb(*apps, invocation, "get");
  AddVerb(*apps, invocation, "scale");
  AddRollback(*apps, invocation);
  AddVerb(*apps, invocation, "rm");
  AddLogs(*apps, invocation);
}

}  // namespace adapt::cli
