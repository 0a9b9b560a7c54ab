#include "runtime/sandbox_spec_files.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "os/files.h"
#include "runtime/security_profile.h"

namespace adapt::runtime {
namespace {

// What switching to a command's user takes: the agent holds these beside the workload's
// capabilities, and gives a root command only those the workload has.
const std::vector<std::pair<std::string, int>> kUserSwitchCaps = {
    {"CAP_SETGID", 6}, {"CAP_SETUID", 7}, {"CAP_SETPCAP", 8}};

// Where a sandbox whose init runs the agent keeps the workload's own process: config.json's
// is the init's (root, with the agent's capabilities), which no command may start from.
constexpr const char* kExecProcessFile = "exec-process.json";

// The process commands start from: the workload's (exec-process.json when the init runs the
// agent, else config.json's).
Result<nlohmann::json> WorkloadProcess(const std::string& dir, const std::string& id) {
  auto own = os::ReadFile(dir + "/" + kExecProcessFile);
  if (own.ok()) {
    auto p = nlohmann::json::parse(*own, nullptr, false);
    if (p.is_object()) return p;
    return Internal("sandbox " + id + " has an unreadable " + kExecProcessFile);
  }
  ASSIGN_OR_RETURN(std::string text, os::ReadFile(dir + "/config.json"));
  auto spec = nlohmann::json::parse(text, nullptr, false);
  if (spec.is_discarded() || !spec.contains("process") || !spec["process"].is_object())
    return Internal("sandbox " + id + " has an unreadable config.json");
  return spec["process"];
}

}  // namespace

std::vector<std::string> AgentCaps(const std::vector<std::string>& workload) {
  std::vector<std::string> caps = workload;
  for (const auto& [name, number] : kUserSwitchCaps)
    if (std::find(caps.begin(), caps.end(), name) == caps.end()) caps.push_back(name);
  return caps;
}

std::string AgentDropCapsFlag(const std::vector<std::string>& workload) {
  std::string list;
  for (const auto& [name, number] : kUserSwitchCaps)
    if (std::find(workload.begin(), workload.end(), name) == workload.end())
      list += (list.empty() ? "" : ",") + std::to_string(number);
  return "--drop-caps=" + list;
}

// adapt-pause starts the agent as its child: the init runs as root with the agent's
// capabilities and the agent's command line after its own.
Status WriteSpecFiles(const std::string& dir, const SandboxSpec& spec,
                      const std::vector<std::string>& agent_argv) {
  if (agent_argv.empty()) {
    RETURN_IF_ERROR(os::RemoveTree(dir + "/" + kExecProcessFile));
    return os::WriteFileAtomic(dir + "/config.json", RenderOciSpec(spec), 0600);
  }
  RETURN_IF_ERROR(os::WriteFileAtomic(dir + "/" + kExecProcessFile, RenderOciProcess(spec), 0600));
  SandboxSpec init = spec;
  init.process.argv.insert(init.process.argv.end(), agent_argv.begin(), agent_argv.end());
  init.process.uid = 0;
  init.process.gid = 0;
  init.process.capabilities = AgentCaps(ProfileCapabilities(spec.security_profile));
  return os::WriteFileAtomic(dir + "/config.json", RenderOciSpec(init), 0600);
}

// `runsc exec --process` reads the whole process from the file and inherits nothing from
// the workload: it starts from the workload's own process (WorkloadProcess: capabilities,
// rlimits, cwd, user, environment) and applies the request.
Result<std::string> ExecProcessSpec(const std::string& dir, const ExecRequest& req) {
  ASSIGN_OR_RETURN(nlohmann::json p, WorkloadProcess(dir, req.sandbox_id));
  try {
    p["terminal"] = false;
    p["args"] = req.argv;
    if (!req.cwd.empty()) p["cwd"] = req.cwd;
    if (!req.user.empty()) {
      auto colon = req.user.find(':');
      p["user"] = {
          {"uid", std::stoul(req.user.substr(0, colon))},
          {"gid", colon == std::string::npos ? 0ul : std::stoul(req.user.substr(colon + 1))}};
    }
    std::vector<std::string> env = p.value("env", std::vector<std::string>{});
    for (const auto& kv : req.env) {
      std::string name = kv.substr(0, kv.find('='));
      auto same = std::find_if(env.begin(), env.end(), [&](const std::string& e) {
        return e.compare(0, name.size() + 1, name + "=") == 0;
      });
      if (same != env.end())
        *same = kv;
      else
        env.push_back(kv);
    }
    p["env"] = env;
  } catch (const std::exception& e) {
    return InvalidArgument("user", std::string("not a uid:gid: ") + e.what());
  }
  return p.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<ExecDefaults> ReadExecDefaults(const std::string& dir, const std::string& id) {
  ASSIGN_OR_RETURN(nlohmann::json p, WorkloadProcess(dir, id));
  ExecDefaults d;
  try {
    d.cwd = p.value("cwd", "/");
    d.env = p.value("env", std::vector<std::string>{});
    if (p.contains("user")) {
      d.uid = p["user"].value("uid", 0u);
      d.gid = p["user"].value("gid", 0u);
    }
  } catch (const std::exception& e) {
    return Internal("sandbox " + id + " has an unreadable process: " + e.what());
  }
  return d;
}

Result<uint64_t> ReadMemoryLimit(const std::string& dir, const std::string& id) {
  ASSIGN_OR_RETURN(std::string text, os::ReadFile(dir + "/config.json"));
  auto spec = nlohmann::json::parse(text, nullptr, false);
  const auto where = "/linux/resources/memory/limit"_json_pointer;
  int64_t limit = 0;
  try {
    if (spec.is_object() && spec.contains(where) && spec.at(where).is_number_integer())
      limit = spec.at(where).get<int64_t>();
  } catch (const std::exception&) {
    limit = 0;  // a path through something other than objects: no limit there
  }
  if (limit <= 0) return Internal("sandbox " + id + " has no memory limit in its config.json");
  return static_cast<uint64_t>(limit);
}

}  // namespace adapt::runtime
