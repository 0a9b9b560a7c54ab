#include "core/sandbox_controller_runtime.h"

#include "base/log.h"

namespace adapt::core {
namespace {

Principal OrgPrincipal(const std::string& org_id) {
  Principal who;
  who.org_id = org_id;
  return who;
}

}  // namespace

Result<TargetState> SandboxControllerRuntime::Observe(const std::string& org_id,
                                                      const std::string& sandbox_id) {
  TargetState t;
  auto sandbox = sandboxes_.Get(OrgPrincipal(org_id), sandbox_id);
  if (!sandbox.ok()) {
    if (sandbox.status().code() == Code::kNotFound) return t;
    return sandbox.status();
  }
  t.found = true;
  t.status = sandbox->status;
  t.stopping = sandbox->hibernation && sandbox->hibernation->processes == "saving";
  t.instant = sandbox->config.startup_class != "durable";
  t.created_at = sandbox->created_at;
  return t;
}

Status SandboxControllerRuntime::Start(const std::string& org_id, const std::string& sandbox_id) {
  return sandboxes_.Start(OrgPrincipal(org_id), sandbox_id).status();
}

Status SandboxControllerRuntime::Stop(const std::string& org_id, const std::string& sandbox_id) {
  // adaptd's own stop: waits out a client's checkpoint of the sandbox rather than lose it,
  // but not for a place of checkpoint work (ResourceExhausted: the controller looks again).
  return sandboxes_.Stop(OrgPrincipal(org_id), sandbox_id, WhenBusy::kWait).status();
}

Result<std::string> SandboxControllerRuntime::Replace(const std::string& org_id,
                                                      const std::string& sandbox_id,
                                                      const std::string& automation_id) {
  ASSIGN_OR_RETURN(Sandbox fresh, sandboxes_.Replace(org_id, sandbox_id,
                                                     {{kReplacementLabel, automation_id},
                                                      {kReplacedLabel, sandbox_id}}));
  return fresh.id;
}

void SandboxControllerRuntime::Discard(const std::string& org_id, const std::string& sandbox_id) {
  auto deleted = sandboxes_.Delete(OrgPrincipal(org_id), sandbox_id);
  if (!deleted.ok() && deleted.status().code() != Code::kNotFound)
    spdlog::warn("controllers: deleting replaced sandbox {}: {}", sandbox_id,
                 deleted.status().message());
}

void SandboxControllerRuntime::AwaitRunning(const std::string& org_id,
                                            const std::string& sandbox_id,
                                            std::function<void(Status)> done) {
  sandboxes_.AwaitSettled(
      OrgPrincipal(org_id), sandbox_id, Waiter::Clock::now() + kStartWait,
      [this, org_id, sandbox_id, done](Waiter::End) {
        auto s = sandboxes_.Get(OrgPrincipal(org_id), sandbox_id);
        if (!s.ok()) return done(s.status());
        if (s->status == "running") return done(Status::Ok());
        done(Internal("it is " + s->status + (s->error ? " (" + *s->error + ")" : std::string())));
      });
}

}  // namespace adapt::core
