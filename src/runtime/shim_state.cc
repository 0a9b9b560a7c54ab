#include "runtime/shim_state.h"

#include <nlohmann/json.hpp>

#include "os/files.h"

namespace adapt::runtime {
namespace {

using nlohmann::json;

const char* PhaseName(ShimPhase p) {
  switch (p) {
    case ShimPhase::kStarting:
      return "starting";
    case ShimPhase::kRunning:
      return "running";
    case ShimPhase::kExited:
      return "exited";
    case ShimPhase::kLaunchFailed:
      return "launch_failed";
  }
  return "starting";
}

ShimPhase ParsePhase(const std::string& s) {
  if (s == "running") return ShimPhase::kRunning;
  if (s == "exited") return ShimPhase::kExited;
  if (s == "launch_failed") return ShimPhase::kLaunchFailed;
  return ShimPhase::kStarting;
}

}  // namespace

Status WriteShimConfig(const std::string& dir, const ShimConfig& c) {
  json j = {{"runsc", c.runsc},
            {"globalFlags", c.global_flags},
            {"containerId", c.container_id},
            {"bundle", c.bundle},
            {"hideProcSysNet", c.hide_proc_sys_net},
            {"agentArgv", c.agent_argv},
            {"agentCaps", c.agent_caps},
            {"restoreImage", c.restore_image},
            {"cpuQuotaUs", c.cpu_quota_us},
            {"cpuPeriodUs", c.cpu_period_us},
            {"idleInit", c.idle_init},
            {"agentInInit", c.agent_in_init}};
  return os::WriteFileAtomic(dir + "/" + kShimConfigFile,
                             j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                             0600);
}

Result<ShimConfig> ReadShimConfig(const std::string& dir) {
  ASSIGN_OR_RETURN(std::string text, os::ReadFile(dir + "/" + kShimConfigFile));
  try {
    json j = json::parse(text);
    ShimConfig c;
    c.runsc = j.at("runsc");
    c.global_flags = j.at("globalFlags").get<std::vector<std::string>>();
    c.container_id = j.at("containerId");
    c.bundle = j.at("bundle");
    c.hide_proc_sys_net = j.value("hideProcSysNet", false);
    c.agent_argv = j.value("agentArgv", std::vector<std::string>{});
    c.agent_caps = j.value("agentCaps", std::vector<std::string>{});
    c.restore_image = j.value("restoreImage", "");
    c.cpu_quota_us = j.value("cpuQuotaUs", int64_t{0});
    c.cpu_period_us = j.value("cpuPeriodUs", int64_t{0});
    c.idle_init = j.value("idleInit", false);
    c.agent_in_init = j.value("agentInInit", false);
    return c;
  } catch (const std::exception& e) {
    return Internal(std::string("reading shim config: ") + e.what());
  }
}

Status WriteShimState(const std::string& dir, const ShimState& s) {
  json j = {{"phase", PhaseName(s.phase)}, {"shimPid", s.shim_pid},
            {"sandboxPid", s.sandbox_pid}, {"startedAt", s.started_at},
            {"finishedAt", s.finished_at}, {"error", s.error}};
  j["exitCode"] = s.exit_code ? json(*s.exit_code) : json(nullptr);
  j["signal"] = s.signal ? json(*s.signal) : json(nullptr);
  j["oomKilled"] = s.oom_killed;
  return os::WriteFileAtomic(dir + "/" + kShimStateFile,
                             j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                             0600);
}

Result<ShimState> ReadShimState(const std::string& dir) {
  ASSIGN_OR_RETURN(std::string text, os::ReadFile(dir + "/" + kShimStateFile));
  try {
    json j = json::parse(text);
    ShimState s;
    s.phase = ParsePhase(j.value("phase", "starting"));
    s.shim_pid = j.value("shimPid", int64_t{0});
    s.sandbox_pid = j.value("sandboxPid", int64_t{0});
    s.started_at = j.value("startedAt", int64_t{0});
    s.finished_at = j.value("finishedAt", int64_t{0});
    s.error = j.value("error", "");
    s.oom_killed = j.value("oomKilled", false);
    if (j.contains("exitCode") && !j["exitCode"].is_null()) s.exit_code = j["exitCode"].get<int>();
    if (j.contains("signal") && !j["signal"].is_null()) s.signal = j["signal"].get<int>();
    return s;
  } catch (const std::exception& e) {
    return Internal(std::string("reading shim state: ") + e.what());
  }
}

}  // namespace adapt::runtime
