// adapt sandbox exec | command get | command wait | command kill
#include <chrono>
#include <iostream>
#include <memory>
#include <ostream>

#include "base/key_value.h"
#include "cli/command_output.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "cli/record_view.h"
#include "cli/sandbox_wait.h"
#include "cli/text_input.h"

namespace adapt::cli {
namespace {

// Splits KEY=VALUE flags into an object.
Result<nlohmann::json> EnvObject(const std::vector<std::string>& pairs) {
  nlohmann::json env = nlohmann::json::object();
  for (const auto& kv : pairs) {
    auto pair = SplitKeyValue(kv);
    if (!pair) return Status(Code::kInvalidArgument, "--env wants KEY=VALUE, got '" + kv + "'");
    env[pair->first] = pair->second;
  }
  return env;
}

// All of standard input, as the command's: text, since the API's `stdin` is a JSON string.
Result<std::string> StdinText(std::istream& in) {
  std::optional<std::string> data = ReadAtMost(in);
  if (!data)
    return Status(Code::kInvalidArgument, "--stdin passes at most 8 MiB of standard input");
  if (!IsPlainText(*data))
    return Status(Code::kInvalidArgument,
                  "--stdin passes text: standard input is not UTF-8 text without NUL bytes "
                  "(copy binary files in with adapt sandbox cp)");
  return std::move(*data);
}

struct ExecOptions {
  std::string sandbox_id;
  std::string cwd;
  std::string user;
  std::vector<std::string> env;
  int timeout = 0;
  bool detach = false;
  bool pass_stdin = false;
  nlohmann::json body;
};

}  // namespace

void AddSandboxExec(CLI::App& group, Invocation& invocation) {
  auto options = std::make_shared<ExecOptions>();
  CLI::App* exec = group.add_subcommand(
      "exec", "Run a command in a running sandbox: adapt sandbox exec ID [OPTIONS] -- ARGV...");
  exec->add_option("id", options->sandbox_id, "sandbox id")->required();
  exec->add_option("--cwd", options->cwd, "working directory")->type_name("DIR");
  exec->add_option("--env", options->env, "environment variable, repeatable")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  exec->add_option("--timeout", options->timeout, "seconds before the command is killed")
      ->type_name("SECONDS");
  exec->add_option("-u,--user", options->user,
                   "run as this user: uid[:gid] or a name of the image's /etc/passwd")
      ->type_name("USER");
  exec->add_flag("-i,--stdin", options->pass_stdin,
                 "pass standard input to the command (text, at most 8 MiB)");
  exec->add_flag("--detach", options->detach, "print the command id and return at once");
  exec->callback([options, &invocation] {
    invocation.accepts_trailing_args = true;
    invocation.prepare = [options, &invocation](const Console& console) -> Status {
      if (!invocation.has_trailing_args || invocation.trailing_args.empty())
        return Status(Code::kInvalidArgument, "give the command after --");
      nlohmann::json& body = options->body;
      body = {{"argv", invocation.trailing_args}, {"waitSeconds", 0}};
      if (!options->cwd.empty()) body["cwd"] = options->cwd;
      if (!options->user.empty()) body["user"] = options->user;
      if (options->pass_stdin) {
        ASSIGN_OR_RETURN(body["stdin"], StdinText(console.in));
      }
      if (options->timeout > 0) body["timeoutSeconds"] = options->timeout;
      if (!options->env.empty()) {
        ASSIGN_OR_RETURN(body["env"], EnvObject(options->env));
      }
      return Status::Ok();
    };
    invocation.run = [options, &invocation](const ApiClient& client, const Console& console) {
      RETURN_IF_ERROR(AwaitProvisioned(client, options->sandbox_id));
      ASSIGN_OR_RETURN(nlohmann::json command,
                       JsonOrError(client.Post(CommandsPath(options->sandbox_id), options->body)));
      if (options->detach) {
        console.out << (invocation.json ? PrettyJson(command) : command.value("id", "") + "\n");
        return Status::Ok();
      }
      return FinishCommand(client, console, invocation, options->sandbox_id, command, "command");
    };
  });
}

void AddCommandCommands(CLI::App& app, Invocation& invocation) {
  CLI::App* group = app.add_subcommand("command", "Inspect and kill commands run in sandboxes");
  group->require_subcommand(1);
  struct Ids {
    std::string sandbox_id, id;
  };
  for (std::string verb : {"get", "wait", "kill"}) {
    auto ids = std::make_shared<Ids>();
    const char* help = verb == "kill"   ? "Kill a running command and its process tree"
                       : verb == "wait" ? "Wait for a command to end, show it, exit with its code"
                                        : "Show one command";
    CLI::App* sub = group->add_subcommand(verb, help);
    sub->add_option("sandbox_id", ids->sandbox_id, "sandbox id")->required();
    sub->add_option("command_id", ids->id, "command id")->required();
    sub->callback([ids, verb, &invocation] {
      invocation.run = [ids, verb, &invocation](const ApiClient& client, const Console& console) {
        std::string path = CommandPath(ids->sandbox_id, ids->id);
        nlohmann::json command;
        if (verb == "wait") {
          ASSIGN_OR_RETURN(command, WaitDone(client, path));
          invocation.exit_code = ExitCodeOf(command);
        } else {
          ASSIGN_OR_RETURN(command,
                           JsonOrError(verb == "kill" ? client.Delete(path) : client.Get(path)));
        }
        console.out << (invocation.json ? PrettyJson(command) : DescribeRecord(command));
        return Status::Ok();
      };
    });
  }
}

}  // namespace adapt::cli
