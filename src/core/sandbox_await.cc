// SandboxService::AwaitSettled: the wait for a starting sandbox (MCP's wait_for_sandbox, the
// brief waits of create_sandbox and start_sandbox), parked on the Waiter: each recorded status
// change of the sandbox reads its row again, and nothing holds a thread meanwhile.
#include "base/ids.h"
#include "core/sandbox_service.h"

namespace adapt::core {

Waiter::Handle SandboxService::AwaitSettled(const Principal& who, const std::string& id,
                                            Waiter::Clock::time_point deadline, Waiter::Done done,
                                            Waiter::Ticks ticks) {
  if (!waiter_ || !IsValidId(id, "sbx")) {
    done(waiter_ ? Waiter::End::kReady : Waiter::End::kCancelled);
    return {};
  }
  auto settled = [this, org_id = who.org_id, id] {
    auto r = store_.GetSandbox(org_id, id);
    return !r.ok() || r->status != "provisioning";
  };
  return waiter_->Start({Change::Kind::kSandboxStatus, id}, deadline, std::move(settled),
                        std::move(done), std::move(ticks));
}

}  // namespace adapt::core
