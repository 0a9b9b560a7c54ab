#include "cli/sandbox_wait.h"

#include <algorithm>
#include <thread>

namespace adapt::cli {
namespace {

using Clock = std::chrono::steady_clock;

// Reads the sandbox's events until one says it is no longer provisioning, the stream ends, or
// `deadline` passes. The stream replays the sandbox's history first, so a status from an
// earlier life (running, then stopped and started again) can end it too: the caller reads the
// record to be sure, and resumes after `last_event_id` instead of replaying again.
// True when an event said the sandbox left provisioning.
Result<bool> FollowUntilChange(const ApiClient& client, const std::string& id,
                               Clock::time_point deadline, std::string& last_event_id) {
  bool changed = false;
  auto on_line = [&](std::string_view line) {
    if (line.starts_with("id:")) {
      line.remove_prefix(3);
      if (line.starts_with(" ")) line.remove_prefix(1);
      last_event_id = std::string(line);
      return true;
    }
    if (!line.starts_with("data:")) return true;
    line.remove_prefix(5);
    const std::string status = SandboxStatus(nlohmann::json::parse(line, nullptr, false));
    changed = !status.empty() && status != "provisioning";
    return !changed;
  };
  StreamOptions options;
  if (!last_event_id.empty()) options.headers.emplace_back("Last-Event-ID", last_event_id);
  options.max_time =
      std::max(std::chrono::milliseconds(1),
               std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
  Result<HttpResponse> response = client.Stream(SandboxPath(id) + "/events", on_line, options);
  if (!response.ok()) return response.status();
  if (!response->timed_out) RETURN_IF_ERROR(ErrorFromResponse(*response));
  return changed;
}

}  // namespace

std::string SandboxStatus(const nlohmann::json& sandbox) {
  if (!sandbox.is_object()) return "";
  auto it = sandbox.find("status");
  return it != sandbox.end() && it->is_string() ? it->get<std::string>() : "";
}

Result<nlohmann::json> WaitWhileProvisioning(const ApiClient& client, const std::string& id,
                                             nlohmann::json sandbox, std::chrono::seconds limit) {
  const Clock::time_point deadline = Clock::now() + limit;
  std::string last_event_id;
  while (SandboxStatus(sandbox) == "provisioning" && Clock::now() < deadline) {
    ASSIGN_OR_RETURN(bool changed, FollowUntilChange(client, id, deadline, last_event_id));
    ASSIGN_OR_RETURN(sandbox, JsonOrError(client.Get(SandboxPath(id))));
    // A stream that ended without news before the deadline (adaptd shutting down) is not
    // reopened in a tight loop.
    if (!changed && SandboxStatus(sandbox) == "provisioning" && Clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return sandbox;
}

Status AwaitProvisioned(const ApiClient& client, const std::string& id,
                        std::chrono::seconds limit) {
  ASSIGN_OR_RETURN(nlohmann::json sandbox, JsonOrError(client.Get(SandboxPath(id))));
  ASSIGN_OR_RETURN(sandbox, WaitWhileProvisioning(client, id, std::move(sandbox), limit));
  if (SandboxStatus(sandbox) == "provisioning")
    return Status(Code::kUnavailable, "sandbox " + id + " is still provisioning after " +
                                          std::to_string(limit.count()) + " s");
  return Status::Ok();
}

}  // namespace adapt::cli
