// adapt sandbox create | list [--watch] | get | wait | delete | events (stop | start:
// sandbox_power_commands.cc)
#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <ostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/output.h"
#include "cli/sandbox_request.h"
#include "cli/sandbox_view.h"
#include "cli/sandbox_wait.h"
#include "cli/sandbox_watch.h"

namespace adapt::cli {
namespace {

Status PrintSandbox(const Result<HttpResponse>& response, bool json, const Console& console) {
  ASSIGN_OR_RETURN(nlohmann::json sandbox, JsonOrError(response));
  console.out << (json ? PrettyJson(sandbox) : DescribeSandbox(sandbox));
  return Status::Ok();
}

// The text of --data: a file, or stdin for "-".
Result<std::string> ReadDataSource(const std::string& source, std::istream& in) {
  std::ostringstream text;
  if (source == "-") {
    text << in.rdbuf();
    return text.str();
  }
  std::ifstream file(source, std::ios::binary);
  if (!file) return Status(Code::kInvalidArgument, "--data: cannot read " + source);
  text << file.rdbuf();
  return text.str();
}

struct CreateOptions {
  SandboxCreateFlags flags;
  std::string data_source;
  std::string idempotency_key;
  int wait_seconds = static_cast<int>(kDefaultSandboxWait.count());
  bool no_wait = false;
  bool quiet = false;
  nlohmann::json body;  // built by prepare
};

std::string Member(const nlohmann::json& object, const char* name) {
  if (!object.is_object()) return "";
  auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// Whether a create that waited got what it asked for. A startup command that ran and exited
// non-zero did (the record says how it ended); a sandbox that could not start, stopped
// unexpectedly or is still provisioning did not.
Status CreateOutcome(const nlohmann::json& sandbox, int waited_seconds) {
  const std::string id = Member(sandbox, "id");
  const std::string status = SandboxStatus(sandbox);
  const std::string error = Member(sandbox, "error");
  if (status == "running" || status == "completed") return Status::Ok();
  if (status == "failed" && error.empty()) return Status::Ok();
  if (status == "failed") return Status(Code::kUnavailable, "sandbox " + id + " failed: " + error);
  if (status == "provisioning")
    return Status(Code::kUnavailable, "sandbox " + id + " is still provisioning after " +
                                          std::to_string(waited_seconds) +
                                          " s; `adapt sandbox get " + id + "` shows when it runs");
  return Status(Code::kUnavailable, "sandbox " + id + " is " + status);
}

void AddSandboxCreate(CLI::App& group, Invocation& invocation) {
  auto options = std::make_shared<CreateOptions>();
  SandboxCreateFlags& flags = options->flags;
  CLI::App* create =
      group.add_subcommand("create", "Create a sandbox; a startup command may follow a literal --");
  create->add_option("--cpu", flags.cpu, "CPUs (default 1)")->type_name("N");
  create->add_option("--memory", flags.memory_mib, "memory in MiB (default 1024)")
      ->type_name("MiB");
  create->add_option("--disk", flags.disk_mib, "writable disk in MiB (default 2048)")
      ->type_name("MiB");
  create
      ->add_option("--ttl", flags.ttl,
                   "lifetime in seconds, 1-86400, or null (also none) for no automatic expiry "
                   "(default 3600)")
      ->type_name("SECONDS|null");
  create
      ->add_option("--idle-timeout", flags.idle_timeout,
                   "hibernate it after this many seconds unused (default never)")
      ->type_name("SECONDS");
  // allow_extra_args(false): each --label takes one value, so repeats are how to give more.
  create->add_option("--label", flags.labels, "label, repeatable")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  create->add_option("--env", flags.env, "environment variable, repeatable")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  create->add_option("--image", flags.image, "OCI image reference")->type_name("REF");
  create->add_flag("--run-image", flags.run_image, "run the image's ENTRYPOINT and CMD");
  create->add_flag("--database", flags.database,
                   "the organization's PostgreSQL database in DATABASE_URL and PG*");
  create->add_option("--egress", flags.egress, "network egress: none, open or allowlist")
      ->type_name("MODE");
  create->add_option("--gpu", flags.gpu, "a GPU type from `adapt gpu ls`: a one-GPU sandbox")
      ->type_name("TYPE");
  create
      ->add_option("--storage", flags.storage,
                   "persistent storage mounted at /workspace (durable sandboxes)")
      ->type_name("NAME");
  create
      ->add_option("--startup-class", flags.startup_class,
                   "durable keeps the encrypted workspace, instant gets a disposable one")
      ->type_name("durable|instant");
  create
      ->add_option("--security-profile", flags.security_profile,
                   "developer permits apt-get with the package-manager capabilities")
      ->type_name("restricted|developer");
  create
      ->add_option("--from-checkpoint", flags.from_checkpoint,
                   "fork a named checkpoint: its memory, processes and files in a new sandbox "
                   "with its own network (only --ttl and --label may be given with it)")
      ->type_name("SANDBOX/NAME");
  create->add_option("--data", options->data_source, "JSON request body from FILE, or - for stdin")
      ->type_name("FILE|-");
  create->footer("Startup command: adapt sandbox create [OPTIONS] -- ARGV...");
  create->add_option("--idempotency-key", options->idempotency_key, "retry-safe creation key")
      ->type_name("KEY");
  CLI::Option* wait = create
                          ->add_option("--wait", options->wait_seconds,
                                       "seconds to wait for it to leave provisioning (default 60)")
                          ->type_name("SECONDS")
                          ->check(CLI::Range(0, 3600));
  create->add_flag("--no-wait", options->no_wait, "return at once, while it is provisioning")
      ->excludes(wait);
  create->add_flag("-q,--quiet", options->quiet, "print only the sandbox's id");

  create->callback([options, &invocation] {
    invocation.accepts_trailing_args = true;
    invocation.prepare = [options, &invocation](const Console& console) -> Status {
      if (invocation.has_trailing_args) options->flags.command = invocation.trailing_args;
      nlohmann::json data;
      if (!options->data_source.empty()) {
        ASSIGN_OR_RETURN(std::string text, ReadDataSource(options->data_source, console.in));
        const std::string source = options->data_source == "-" ? "stdin" : options->data_source;
        ASSIGN_OR_RETURN(data, ParseDataDocument(text, source));
      }
      ASSIGN_OR_RETURN(options->body, BuildCreateBody(options->flags, data));
      return Status::Ok();
    };
    invocation.run = [options, &invocation](const ApiClient& client, const Console& console) {
      HeaderList headers;
      if (!options->idempotency_key.empty()) {
        headers.emplace_back("Idempotency-Key", options->idempotency_key);
      }
      ASSIGN_OR_RETURN(nlohmann::json sandbox,
                       JsonOrError(client.Post("/v1/sandboxes", options->body, headers)));
      // Until it leaves provisioning, a sandbox takes no commands or files: a script's next
      // line (`adapt sandbox exec`) would fail, so the create waits unless told not to.
      const int limit = options->no_wait ? 0 : options->wait_seconds;
      Result<nlohmann::json> waited = WaitWhileProvisioning(client, Member(sandbox, "id"), sandbox,
                                                            std::chrono::seconds(limit));
      if (waited.ok()) sandbox = *waited;
      if (options->quiet) {
        console.out << Member(sandbox, "id") << "\n";
      } else {
        console.out << (invocation.json ? PrettyJson(sandbox) : DescribeSandbox(sandbox));
      }
      if (!waited.ok())
        return Status(waited.status().code(),
                      "sandbox " + Member(sandbox, "id") +
                          " was created; waiting for it: " + waited.status().message());
      return limit > 0 ? CreateOutcome(sandbox, limit) : Status::Ok();
    };
  });
}

struct SandboxListOptions {
  std::string limit;
  std::string query;
  std::string cursor;
  bool watch = false;
};

void AddSandboxList(CLI::App& group, Invocation& invocation) {
  auto options = std::make_shared<SandboxListOptions>();
  CLI::App* list = group.add_subcommand("list", "List sandboxes, newest first");
  list->add_option("--limit", options->limit, "page size, 1-200 (default 50)");
  list->add_option("--query", options->query, "part of labels.name, or the start of an id");
  list->add_option("--cursor", options->cursor, "nextCursor of the previous page");
  list->add_flag("--watch", options->watch,
                 "then follow the organization's events, a line each, until interrupted");
  list->callback([options, &invocation] {
    invocation.run = [options, &invocation](const ApiClient& client, const Console& console) {
      const std::string path = "/v1/sandboxes" + QueryString({{"limit", options->limit},
                                                              {"query", options->query},
                                                              {"cursor", options->cursor}});
      auto print_list = [&]() -> Status {
        ASSIGN_OR_RETURN(nlohmann::json page, JsonOrError(client.Get(path)));
        if (invocation.json) {
          // One line when watching, so that every line of the output is one JSON value.
          console.out << (options->watch ? page.dump(-1, ' ', false,
                                                     nlohmann::json::error_handler_t::replace) +
                                               "\n"
                                         : PrettyJson(page))
                      << std::flush;
          return Status::Ok();
        }
        std::vector<TableRow> rows;
        if (page.contains("items") && page["items"].is_array()) {
          for (const nlohmann::json& sandbox : page["items"])
            rows.push_back(SandboxTableRow(sandbox));
        }
        console.out << FormatTable(SandboxTableHeader(), rows) << FormatNextCursor(page)
                    << std::flush;
        return Status::Ok();
      };
      if (options->watch) return WatchSandboxes(client, console, invocation.json, print_list);
      return print_list();
    };
  });
}

void AddGet(CLI::App& group, Invocation& invocation) {
  auto id = std::make_shared<std::string>();
  CLI::App* get = group.add_subcommand("get", "Show one sandbox, deleted ones included");
  get->add_option("id", *id, "sandbox id")->required();
  get->callback([id, &invocation] {
    invocation.run = [id, &invocation](const ApiClient& client, const Console& console) {
      return PrintSandbox(client.Get(SandboxPath(*id)), invocation.json, console);
    };
  });
}

// adapt sandbox wait ID [--timeout SECONDS]: GET /v1/sandboxes/{id}?waitSeconds= (MCP's
// wait_for_sandbox) until it has left provisioning; exits as create --wait does.
void AddWait(CLI::App& group, Invocation& invocation) {
  auto id = std::make_shared<std::string>();
  auto timeout = std::make_shared<int>(static_cast<int>(kDefaultSandboxWait.count()));
  CLI::App* wait = group.add_subcommand(
      "wait", "Wait for a starting sandbox to run; exit 1 if it does not (failed, still starting)");
  wait->add_option("id", *id, "sandbox id")->required();
  wait->add_option("--timeout", *timeout, "seconds to wait (default 60)")
      ->type_name("SECONDS")
      ->check(CLI::Range(0, 3600));
  wait->callback([id, timeout, &invocation] {
    invocation.run = [id, timeout, &invocation](const ApiClient& client, const Console& console) {
      // adaptd waits at most a minute a request: a longer wait asks again.
      constexpr int kPerRequest = 60;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(*timeout);
      nlohmann::json sandbox;
      for (;;) {
        auto left = std::chrono::duration_cast<std::chrono::seconds>(
                        deadline - std::chrono::steady_clock::now())
                        .count();
        int seconds = static_cast<int>(std::clamp<int64_t>(left, 0, kPerRequest));
        ASSIGN_OR_RETURN(
            sandbox,
            JsonOrError(client.Get(SandboxPath(*id) + "?waitSeconds=" + std::to_string(seconds))));
        if (SandboxStatus(sandbox) != "provisioning" || seconds == 0) break;
      }
      console.out << (invocation.json ? PrettyJson(sandbox) : DescribeSandbox(sandbox));
      return CreateOutcome(sandbox, *timeout);
    };
  });
}

void AddDelete(CLI::App& group, Invocation& invocation) {
  auto id = std::make_shared<std::string>();
  CLI::App* remove = group.add_subcommand(
      "delete",
      "Delete a sandbox: its compute and writable disk (persistent storage and objects are kept)");
  remove->add_option("id", *id, "sandbox id")->required();
  remove->callback([id, &invocation] {
    invocation.run = [id, &invocation](const ApiClient& client, const Console& console) {
      Result<HttpResponse> response = client.Delete(SandboxPath(*id));
      ASSIGN_OR_RETURN(nlohmann::json body, JsonOrError(response));
      // 202: cleanup continues in adaptd; 204: done. Either may come without a body.
      const bool pending = response->status == 202;
      if (invocation.json) {
        if (body.is_null()) body = {{"id", *id}, {"status", pending ? "deleting" : "deleted"}};
        console.out << PrettyJson(body);
      } else if (pending) {
        console.out << "deleting " << *id << " (cleanup pending)\n";
      } else {
        console.out << "deleted " << *id << "\n";
      }
      return Status::Ok();
    };
  });
}

void AddEvents(CLI::App& group, Invocation& invocation) {
  auto id = std::make_shared<std::string>();
  CLI::App* events = group.add_subcommand(
      "events", "Stream status events of one sandbox, or of all; one JSON object a line");
  events->add_option("id", *id, "sandbox id (all sandboxes when omitted)");
  events->callback([id, &invocation] {
    invocation.run = [id](const ApiClient& client, const Console& console) {
      const std::string path = id->empty() ? "/v1/events" : SandboxPath(*id) + "/events";
      auto on_line = [&console](std::string_view line) {
        if (!line.starts_with("data:")) return true;  // id:, event:, comments, blank separators
        line.remove_prefix(5);
        if (line.starts_with(" ")) line.remove_prefix(1);
        console.out << line << std::endl;  // flushed: a reader may be waiting on a pipe
        return true;
      };
      Result<HttpResponse> response = client.Stream(path, on_line);
      if (!response.ok()) return response.status();
      return ErrorFromResponse(*response);
    };
  });
}

}  // namespace

void AddSandboxCommands(CLI::App& app, Invocation& invocation) {
  CLI::App* group = app.add_subcommand("sandbox", "Create, inspect and delete sandboxes");
  group->require_subcommand(1);
  AddSandboxCreate(*group, invocation);
  AddSandboxList(*group, invocation);
  AddGet(*group, invocation);
  AddWait(*group, invocation);
  AddDelete(*group, invocation);
  AddEvents(*group, invocation);
  AddSandboxExec(*group, invocation);
  AddSandboxPython(*group, invocation);
  AddSandboxFiles(*group, invocation);
  AddSandboxExpose(*group, invocation);
  AddSandboxStopStart(*group, invocation);
  AddSandboxCheckpoints(*group, invocation);
  AddSandboxStats(*group, invocation);
  AddSandboxLogs(*group, invocation);
}

}  // namespace adapt::cli
