#include "core/startup_output.h"

#include "core/sandbox_service.h"

namespace adapt::core {
namespace {

enum class Delta { kNone, kAppended, kReplaced };

// `now` against `sent`: output only grows, except that the ring drops its oldest bytes once
// full. A text that is a prefix of what was sent is a read from before the last one (nothing).
Delta Compare(const std::string& sent, const std::string& now) {
  if (now.size() >= sent.size() && now.compare(0, sent.size(), sent) == 0)
    return now.size() == sent.size() ? Delta::kNone : Delta::kAppended;
  if (sent.compare(0, now.size(), now) == 0) return Delta::kNone;
  return Delta::kReplaced;
}

}  // namespace

Result<StartupOutputUpdate> StartupOutputFollower::Next() {
  ASSIGN_OR_RETURN(Sandbox s, read_());
  StartupOutputUpdate update;
  if (!s.startup) return update;
  const std::string& out = s.startup->stdout_text;
  const std::string& err = s.startup->stderr_text;
  Delta d_out = Compare(stdout_sent_, out);
  Delta d_err = Compare(stderr_sent_, err);
  if (d_out == Delta::kReplaced || d_err == Delta::kReplaced) {
    update.replaced = true;
    update.stdout_text = out;
    update.stderr_text = err;
    stdout_sent_ = out;
    stderr_sent_ = err;
  } else {
    if (d_out == Delta::kAppended) {
      update.stdout_text = out.substr(stdout_sent_.size());
      stdout_sent_ = out;
    }
    if (d_err == Delta::kAppended) {
      update.stderr_text = err.substr(stderr_sent_.size());
      stderr_sent_ = err;
    }
  }
  if (s.status != "provisioning" && s.status != "running") update.ended = std::move(s);
  return update;
}

Result<StartupOutputFollower> SandboxService::FollowStartup(const Principal& who,
                                                            const std::string& id) {
  ASSIGN_OR_RETURN(Sandbox s, Get(who, id));
  if (!s.startup)
    return Status(Code::kConflict,
                  "sandbox " + id + " has no startup command: it is an interactive sandbox");
  return StartupOutputFollower([this, who, id] { return Get(who, id); });
}

}  // namespace adapt::core
