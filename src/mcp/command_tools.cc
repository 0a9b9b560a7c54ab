// run_command, run_python and get_command_result over core::CommandService. A command that
// outlives the call's wait keeps running; its request_id polls it without running it again.
#include <chrono>

#include "core/python_command.h"
#include "mcp/sandbox_summary.h"
#include "mcp/tools.h"

namespace adapt::mcp {
namespace {

using nlohmann::json;

json CommandSchema() {
  const json nullable_int = {{"type", json::array({"integer", "null"})}};
  return {{"type", "object"},
          {"properties",
           {{"request_id", {{"type", "string"}, {"description", "poll with get_command_result"}}},
            {"sandbox_id", {{"type", "string"}}},
            {"status",
             {{"type", "string"}, {"description", "running, exited, timeout, killed or lost"}}},
            {"done", {{"type", "boolean"}, {"description", "false: still running"}}},
            {"exit_code", nullable_int},
            {"stdout", {{"type", "string"}}},
            {"stderr", {{"type", "string"}}},
            {"truncated", {{"type", "boolean"}, {"description", "only the latest 1 MiB was kept"}}},
            {"error",
             {{"type", json::array({"string", "null"})},
              {"description", "why a lost command ended (its sandbox ran out of memory, ...)"}}},
            {"next_action", {{"type", "string"}}}}},
          {"required",
           json::array({"request_id", "sandbox_id", "status", "done", "stdout", "stderr"})}};
}

std::string RequestId(const std::string& sandbox_id, const std::string& command_id) {
  return sandbox_id + "/" + command_id;
}

ToolResult Answer(const std::string& sandbox_id, const core::Command& c) {
  if (core::PythonMissing(c))
    return ToolResult::Fail("The image of sandbox " + sandbox_id +
                            " has no python3; use run_command, or create a sandbox from an image "
                            "with Python (see list_sandbox_environments).");
  bool done = !c.running();
  std::string request_id = RequestId(sandbox_id, c.id);
  json out = {{"request_id", request_id},
              {"sandbox_id", sandbox_id},
              {"status", c.status},
              {"done", done},
              {"exit_code", c.exit_code ? json(*c.exit_code) : json(nullptr)},
              {"stdout", c.stdout_text},
              {"stderr", c.stderr_text},
              {"truncated", c.truncated},
              {"error", c.error.empty() ? json(nullptr) : json(c.error)}};
  out["next_action"] = done ? "The command has ended; read stdout, stderr and exit_code."
                            : "Still running: call get_command_result with request_id " +
                                  request_id + " to poll it.";
  if (c.status == "lost")
    out["next_action"] = "The command was lost without an exit code: " +
                         (c.error.empty() ? std::string("its sandbox's agent went away") : c.error);
  return ToolResult::Ok(out);
}

// Kills the command of a cancelled call and replies once it ended (or after the core's
// kKillWait), holding no thread meanwhile.
void KillAndReply(core::CommandService& commands, const core::Principal& who,
                  const std::string& sandbox_id, const std::string& id, ToolReply reply) {
  auto stopped = [id, reply](core::Waiter::End) {
    reply(ToolResult::Fail("The call was cancelled and command " + id + " was stopped."));
  };
  auto killed = commands.Kill(who, sandbox_id, id);
  if (!killed.ok() || killed->finished) return stopped(core::Waiter::End::kReady);
  commands.AwaitEnd(id, std::chrono::steady_clock::now() + core::CommandService::kKillWait,
                    std::move(stopped));
}

// Answers once the command ended or `seconds` passed, reporting progress meanwhile, through
// `reply`; the wait parks on the core's Waiter and holds no thread. When the client cancels
// the call, the command is killed (`kill_on_cancel`) and the call ends.
void Follow(core::CommandService& commands, ToolContext& ctx, const std::string& sandbox_id,
            const std::string& id, int seconds, bool kill_on_cancel, ToolReply reply) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  // Checked before waiting: another organization's command is not found, not waited on.
  auto now = commands.Get(ctx.who, sandbox_id, id);
  if (!now.ok()) return reply(ToolResult::Fail(FailureSentence(now.status())));
  if (!now->running() || seconds == 0) return reply(Answer(sandbox_id, *now));
  // The first report comes early: a short wait_seconds would otherwise report nothing.
  core::Waiter::Ticks ticks{std::chrono::milliseconds(250), std::chrono::seconds(1),
                            [progress = ctx.progress, start, seconds, id] {
                              progress(std::chrono::duration<double>(Clock::now() - start).count(),
                                       seconds, "command " + id + " is running");
                            }};
  auto cancelled = ctx.cancelled;
  auto ended = [&commands, who = ctx.who, sandbox_id, id, kill_on_cancel, cancelled,
                reply](core::Waiter::End) {
    if (cancelled->IsSet()) {
      if (kill_on_cancel) return KillAndReply(commands, who, sandbox_id, id, reply);
      return reply(ToolResult::Fail("The call was cancelled and command " + id + " was stopped."));
    }
    auto c = commands.Get(who, sandbox_id, id);
    if (!c.ok()) return reply(ToolResult::Fail(FailureSentence(c.status())));
    reply(Answer(sandbox_id, *c));
  };
  auto wait = commands.AwaitEnd(id, start + std::chrono::seconds(seconds), std::move(ended),
                                std::move(ticks));
  cancelled->OnSet([wait] { wait.Cancel(); });
}

// Calls `run` with the seconds left of the call's wait once the sandbox can take a command:
// at once, unless it is still booting (created, started or given object storage a moment
// ago), when it first waits for the boot within that wait, as the CLI's exec does, holding
// no thread meanwhile. A sandbox still booting at the end is answered with what to do.
void WhenBooted(core::SandboxService& sandboxes, ToolContext& ctx, const std::string& sandbox_id,
                int seconds, std::function<void(int)> run, ToolReply reply) {
  auto now = sandboxes.Get(ctx.who, sandbox_id);
  // Anything else (not found, stopped, running) is for the command's own start to answer.
  if (!now.ok() || now->status != "provisioning" || seconds == 0) return run(seconds);
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  WaitForSandboxReadyLater(
      sandboxes, ctx, sandbox_id, seconds,
      [sandbox_id, seconds, start, cancelled = ctx.cancelled, run = std::move(run),
       reply = std::move(reply)](Result<core::Sandbox> s) {
        if (cancelled->IsSet())
          return reply(ToolResult::Fail("The call was cancelled while sandbox " + sandbox_id +
                                        " was starting; no command was run."));
        if (s.ok() && s->status == "provisioning")
          return reply(ToolResult::Fail(
              "Sandbox " + sandbox_id + " is still starting after " + std::to_string(seconds) +
              " s; call wait_for_sandbox until ready is true, then run the command again."));
        auto waited = std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - start);
        run(std::max(0, seconds - static_cast<int>(waited.count())));
      });
}

void Start(core::SandboxService& sandboxes, core::CommandService& commands, ToolContext& ctx,
           const json& args, ToolReply reply) {
  std::string sandbox_id = args["sandbox_id"];
  core::RunCommandRequest command;
  command.argv = {"/bin/sh", "-c", args["command"].get<std::string>()};
  command.cwd = args.value("cwd", "");
  command.timeout_seconds = args.value("timeout_seconds", command.timeout_seconds);
  command.wait_seconds = 0;  // the wait is Follow's, which reports progress
  auto run = [&commands, ctx, sandbox_id, command, reply](int seconds) mutable {
    auto started = commands.Start(ctx.who, sandbox_id, std::move(command));
    if (!started.ok()) return reply(ToolResult::Fail(FailureSentence(started.status())));
    Follow(commands, ctx, sandbox_id, started->id, seconds, true, std::move(reply));
  };
  WhenBooted(sandboxes, ctx, sandbox_id, args.value("wait_seconds", 10), std::move(run), reply);
}

void StartPython(core::SandboxService& sandboxes, core::CommandService& commands, ToolContext& ctx,
                 const json& args, ToolReply reply) {
  std::string sandbox_id = args["sandbox_id"];
  core::RunPython python;
  python.code = args["code"];
  python.timeout_seconds = args.value("timeout_seconds", python.timeout_seconds);
  python.wait_seconds = 0;  // the wait is Follow's, which reports progress
  auto run = [&commands, ctx, sandbox_id, python, reply](int seconds) mutable {
    auto started = commands.StartPython(ctx.who, sandbox_id, python);
    if (!started.ok()) return reply(ToolResult::Fail(FailureSentence(started.status())));
    Follow(commands, ctx, sandbox_id, started->id, seconds, true, std::move(reply));
  };
  WhenBooted(sandboxes, ctx, sandbox_id, args.value("wait_seconds", 10), std::move(run), reply);
}

json RunSchema(const char* what, const char* text_description) {
  return {{"type", "object"},
          {"properties",
           {{"sandbox_id",
             {{"type", "string"}, {"minLength", 1}, {"maxLength", 128}, {"description", "where"}}},
            {what,
             {{"type", "string"},
              {"minLength", 1},
              {"maxLength", 131072},
              {"description", text_description}}},
            {"timeout_seconds",
             {{"type", "integer"},
              {"minimum", 1},
              {"maximum", 86400},
              {"description", "the command is killed after this long (default 600)"}}},
            {"wait_seconds",
             {{"type", "integer"},
              {"minimum", 0},
              {"maximum", 60},
              {"description",
               "how long to wait for a sandbox still starting and for the result before "
               "returning a request_id (default 10)"}}}}},
          {"required", json::array({"sandbox_id", what})},
          {"additionalProperties", false}};
}

}  // namespace

void AddCommandTools(ToolRegistry& registry, const ToolServices& services) {
  core::CommandService& commands = services.commands;
  core::SandboxService& sandboxes = services.sandboxes;

  json run_schema = RunSchema("command", "a shell command line, run with /bin/sh -c");
  run_schema["properties"]["cwd"] = {
      {"type", "string"}, {"maxLength", 4096}, {"description", "working directory"}};
  registry.Add({"run_command", "Run a command",
                "Run a command. Long commands return a request_id that can be polled with "
                "get_command_result.",
                run_schema, CommandSchema(), ToolAnnotations{false, true, false, true}, nullptr,
                [&sandboxes, &commands](ToolContext& ctx, const json& args, ToolReply reply) {
                  Start(sandboxes, commands, ctx, args, std::move(reply));
                }});

  registry.Add({"run_python", "Run Python",
                "Run Python. Long commands return a request_id that can be polled with "
                "get_command_result.",
                RunSchema("code", "the Python program, passed on standard input"), CommandSchema(),
                ToolAnnotations{false, true, false, true}, nullptr,
                [&sandboxes, &commands](ToolContext& ctx, const json& args, ToolReply reply) {
                  StartPython(sandboxes, commands, ctx, args, std::move(reply));
                }});

  registry.Add({"get_command_result",
                "Get a command's result",
                "Poll a long-running run_command or run_python request without replaying it.",
                {{"type", "object"},
                 {"properties",
                  {{"request_id",
                    {{"type", "string"},
                     {"minLength", 1},
                     {"maxLength", 300},
                     {"description", "the request_id run_command or run_python returned"}}},
                   {"wait_seconds", {{"type", "integer"}, {"minimum", 0}, {"maximum", 60}}}}},
                 {"required", json::array({"request_id"})},
                 {"additionalProperties", false}},
                CommandSchema(),
                ToolAnnotations{true, false, true, true},
                nullptr,
                [&commands](ToolContext& ctx, const json& args, ToolReply reply) {
                  std::string request_id = args["request_id"];
                  size_t slash = request_id.find('/');
                  if (slash == std::string::npos || slash == 0 || slash + 1 == request_id.size())
                    return reply(
                        ToolResult::Fail("request_id " + request_id +
                                         " is not one that run_command or run_python returned."));
                  Follow(commands, ctx, request_id.substr(0, slash), request_id.substr(slash + 1),
                         args.value("wait_seconds", 0), false, std::move(reply));
                }});
}

}  // namespace adapt::mcp
