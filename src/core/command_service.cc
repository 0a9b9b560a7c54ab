#include "core/command_service.h"

#include "base/client_message.h"
#include "base/ids.h"
#include "base/list_cursor.h"
#include "base/log.h"
#include "base/time.h"
#include "core/command_request.h"
#include "core/python_command.h"
#include "core/sandbox_operations.h"
#include "core/sandbox_view.h"
#include "core/startup_plan.h"

namespace adapt::core {
namespace {

// How long a command of the previous adaptd waits for its sandbox's agent to reconnect.
constexpr auto kReattachWait = std::chrono::seconds(20);

}  // namespace

CommandService::CommandService(store::Store& store, runtime::Runtime& runtime,
                               const ImageCatalog& images)
    : store_(store), runtime_(runtime), images_(images), runner_(store, runtime) {}

void CommandService::Reconcile() {
  auto running = store_.ListCommandsWithStatus("running");
  if (!running.ok()) {
    spdlog::error("reconciling commands: {}", running.status().message());
    return;
  }
  size_t reattached = 0;
  for (auto& c : *running) {
    // Served by the agent: it kept the process (and its output) while adaptd was away.
    if (c.served_by == "agent") {
      auto sandbox = store_.GetSandbox(c.org_id, c.sandbox_id);
      if (sandbox.ok() && sandbox->status == "running") {
        runner_.Reattach(c, RedactionValues(*sandbox), kReattachWait);
        ++reattached;
        continue;
      }
    }
    // Its sandbox's own error, when it ended of itself, says more than our restart does.
    auto sandbox = store_.GetSandbox(c.org_id, c.sandbox_id);
    c.status = "lost";
    c.termination_reason = "lost";
    c.finished_at = NowMillis();
    c.error = sandbox.ok() && !sandbox->error.empty()
                  ? sandbox->error
                  : "adaptd restarted while the command ran; its outcome is unknown";
    Status st = store_.PutCommand(c);
    if (!st.ok()) spdlog::error("command {}: {}", c.id, st.message());
  }
  if (running->size() > reattached)
    spdlog::info("{} command(s) lost with the previous adaptd", running->size() - reattached);
  if (reattached) spdlog::info("{} command(s) to attach again through the agents", reattached);
}

Result<agent::SpawnRequest> CommandService::AgentSpawn(
    const runtime::ExecRequest& exec, std::optional<std::pair<uint32_t, uint32_t>> user) {
  // The agent starts processes from scratch: what runsc exec would inherit from the
  // workload (environment, cwd, user) is spelled out.
  ASSIGN_OR_RETURN(runtime::ExecDefaults d, runtime_.GetExecDefaults(exec.sandbox_id));
  agent::SpawnRequest s;
  s.argv = exec.argv;
  s.cwd = exec.cwd.empty() ? d.cwd : exec.cwd;
  s.uid = user ? user->first : d.uid;
  s.gid = user ? user->second : d.gid;
  std::map<std::string, size_t> index;
  for (const auto& kv : d.env) {
    index[kv.substr(0, kv.find('='))] = s.env.size();
    s.env.push_back(kv);
  }
  for (const auto& kv : exec.env) {
    auto it = index.find(kv.substr(0, kv.find('=')));
    if (it != index.end())
      s.env[it->second] = kv;
    else
      s.env.push_back(kv);
  }
  return s;
}

Result<store::SandboxRecord> CommandService::FindSandbox(const Principal& who,
                                                         const std::string& id) {
  if (!IsValidId(id, "sbx")) return NotFound("sandbox " + id + " not found");
  return store_.GetSandbox(who.org_id, id);
}

Result<store::CommandRecord> CommandService::FindCommand(const Principal& who,
                                                         const std::string& sandbox_id,
                                                         const std::string& id) {
  RETURN_IF_ERROR(FindSandbox(who, sandbox_id).status());
  if (!IsValidId(id, "cmd")) return NotFound("command " + id + " not found");
  ASSIGN_OR_RETURN(store::CommandRecord c, store_.GetCommand(who.org_id, sandbox_id, id));
  if (auto live = runner_.Snapshot(id)) return *live;
  return c;
}

Waiter::Handle CommandService::AwaitEnd(const std::string& id, Waiter::Clock::time_point deadline,
                                        Waiter::Done done, Waiter::Ticks ticks) {
  if (!waiter_) {
    done(Waiter::End::kCancelled);
    return {};
  }
  return waiter_->Start(
      {Change::Kind::kCommandEnded, id}, deadline, [this, id] { return !runner_.IsRunning(id); },
      std::move(done), std::move(ticks));
}

Result<RunOutcome> CommandService::Outcome(const Principal& who, const std::string& sandbox_id,
                                           const std::string& id) {
  RunOutcome outcome;
  if (auto live = runner_.Snapshot(id)) {
    outcome.command = ViewOf(*live);
    return outcome;
  }
  // Just ended here: its record as written, not read back (its output decoded again).
  if (auto ended = runner_.Finished(who.org_id, sandbox_id, id)) {
    outcome.command = ViewOf(*ended);
    outcome.finished = !outcome.command.running();
    return outcome;
  }
  ASSIGN_OR_RETURN(store::CommandRecord done, store_.GetCommand(who.org_id, sandbox_id, id));
  // "running" still: recorded by another adaptd's run and not taken over here.
  outcome.command = ViewOf(done);
  outcome.finished = !outcome.command.running();
  return outcome;
}

Result<StartedCommand> CommandService::Start(const Principal& who, const std::string& sandbox_id,
                                             RunCommandRequest req) {
  ASSIGN_OR_RETURN(store::SandboxRecord sandbox, FindSandbox(who, sandbox_id));
  RETURN_IF_ERROR(ValidateRunCommand(req));
  return StartCommand(who, std::move(sandbox), std::move(req));
}

Result<StartedCommand> CommandService::StartPython(const Principal& who,
                                                   const std::string& sandbox_id,
                                                   const RunPython& python) {
  ASSIGN_OR_RETURN(store::SandboxRecord sandbox, FindSandbox(who, sandbox_id));
  ASSIGN_OR_RETURN(RunCommandRequest req, PythonCommand(python));
  return StartCommand(who, std::move(sandbox), std::move(req));
}

Result<RunOutcome> CommandService::PythonOutcome(const Principal& who,
                                                 const std::string& sandbox_id,
                                                 const std::string& id) {
  ASSIGN_OR_RETURN(RunOutcome outcome, Outcome(who, sandbox_id, id));
  if (outcome.finished && PythonMissing(outcome.command))
    return Status(Code::kUnsupported, "the image of sandbox " + sandbox_id + " has no python3");
  return outcome;
}

Result<StartedCommand> CommandService::StartCommand(const Principal& who,
                                                    store::SandboxRecord sandbox,
                                                    RunCommandRequest req) {
  const std::string& sandbox_id = sandbox.id;
  if (sandbox.status != "running")
    return Conflict("sandbox " + sandbox_id + " is " + sandbox.status +
                    "; commands run only in a running sandbox");
  // Its container is being saved or replaced: nothing could run in it meanwhile.
  RETURN_IF_ERROR(RefuseDuringCheckpointWork(store_, sandbox_id));
  runtime::ExecRequest exec;
  exec.sandbox_id = sandbox_id;
  exec.argv = req.argv;
  exec.cwd = req.cwd;
  for (const auto& [k, v] : req.env) exec.env.push_back(k + "=" + v);
  // attach_sandbox_object_storage's variables reach every command started after the attach.
  // A sandbox taken from a warm pool was booted before its env was known: all of it, here.
  bool pooled = sandbox.config.pool && sandbox.config.pool->used;
  for (const auto& [k, v] : sandbox.env) {
    if ((pooled || k.rfind("SANDBOX_STORAGE_", 0) == 0) && !req.env.count(k))
      exec.env.push_back(k + "=" + v);
  }
  std::optional<std::pair<uint32_t, uint32_t>> user_ids;
  if (!req.user.empty()) {
    ASSIGN_OR_RETURN(Image image, images_.Resolve(sandbox.org_id, sandbox.config.image));
    ASSIGN_OR_RETURN(auto ids, ResolveUserIds(req.user, image.rootfs, "user"));
    exec.user = std::to_string(ids.first) + ":" + std::to_string(ids.second);
    user_ids = {static_cast<uint32_t>(ids.first), static_cast<uint32_t>(ids.second)};
  }

  store::CommandRecord c;
  c.id = NewId("cmd");
  c.org_id = who.org_id;
  c.sandbox_id = sandbox_id;
  c.status = "running";
  c.created_at = NowMillis();
  c.argv = req.argv;
  c.cwd = req.cwd;
  c.user = req.user;
  c.timeout_seconds = req.timeout_seconds;
  c.served_by = "runsc-exec";
  // The agent when it is connected (or, just after the boot, once it is); `runsc exec` when
  // it is not, or cannot take the command.
  bool via_agent = false, recorded = false;
  if (auto agent = runtime_.AgentAfterBoot(sandbox_id)) {
    auto spawn = AgentSpawn(exec, user_ids);
    if (spawn.ok()) {
      c.served_by = "agent";
      RETURN_IF_ERROR(store_.PutCommand(c).WithContext("recording the command"));
      recorded = true;
      Status st = runner_.StartViaAgent(c, agent, std::move(*spawn), req.stdin_data,
                                        req.timeout_seconds, RedactionValues(sandbox));
      via_agent = st.ok();
      if (!via_agent)
        spdlog::info("command {}: the agent could not take it: {}", c.id, st.message());
    }
    c.served_by = via_agent ? "agent" : "runsc-exec";
  }
  if (!via_agent) {
    auto process = runtime_.Exec(exec);
    if (!process.ok()) {
      if (recorded) {
        // Recorded above for the agent: the record must not stay "running".
        c.status = "failed";
        c.termination_reason = "failed";
        c.finished_at = NowMillis();
        c.error = "starting the command: " + RecordMessage(process.status());
        // The start error is the answer either way; a record left "running" is failed by the
        // next reconciliation, so a failed write is logged, not returned.
        if (Status st = store_.PutCommand(c); !st.ok())
          spdlog::warn("command {}: recording that it failed to start: {}", c.id, st.message());
      }
      return process.status().WithContext("starting the command");
    }
    Status stored = store_.PutCommand(c);
    // The runner reaps the process either way; unrecorded, it is killed at once.
    runner_.Start(c, std::move(*process), std::move(req.stdin_data), req.timeout_seconds,
                  RedactionValues(sandbox));
    if (!stored.ok()) {
      runner_.Kill(c.id);
      return stored.WithContext("recording the command");
    }
  }
  return StartedCommand{c.id, req.wait_seconds};
}

Result<Command> CommandService::Get(const Principal& who, const std::string& sandbox_id,
                                    const std::string& id) {
  ASSIGN_OR_RETURN(store::CommandRecord c, FindCommand(who, sandbox_id, id));
  return ViewOf(c);
}

Result<CommandPage> CommandService::List(const Principal& who, const std::string& sandbox_id,
                                         const ListCommandsRequest& req) {
  if (req.limit < 1 || req.limit > 200)
    return InvalidArgument("limit", "limit must be between 1 and 200");
  ASSIGN_OR_RETURN(auto before, ParseListCursor(req.cursor));
  RETURN_IF_ERROR(FindSandbox(who, sandbox_id).status());
  ASSIGN_OR_RETURN(store::CommandPage page,
                   store_.ListCommands(who.org_id, sandbox_id, req.limit, before));
  CommandPage out;
  for (const auto& c : page.items) {
    auto live = c.status == "running" ? runner_.Snapshot(c.id) : std::nullopt;
    out.items.push_back(ViewOf(live ? *live : c));
  }
  out.next_cursor = NextListCursor(page.next_seq);
  return out;
}

Result<std::unique_ptr<CommandRunner::Tap>> CommandService::Follow(const Principal& who,
                                                                   const std::string& sandbox_id,
                                                                   const std::string& id) {
  RETURN_IF_ERROR(FindCommand(who, sandbox_id, id).status());
  return runner_.Follow(id);
}

Result<RunOutcome> CommandService::Kill(const Principal& who, const std::string& sandbox_id,
                                        const std::string& id, std::chrono::milliseconds grace) {
  ASSIGN_OR_RETURN(store::CommandRecord c, FindCommand(who, sandbox_id, id));
  RunOutcome outcome;
  outcome.command = ViewOf(c);
  outcome.finished = !outcome.command.running();
  // False: it just ended, or it is another adaptd's run; AwaitEnd then ends at once.
  if (!outcome.finished) runner_.Kill(id, grace);
  return outcome;
}

}  // namespace adapt::core
