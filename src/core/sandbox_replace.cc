// SandboxService::Replace: a fresh instant sandbox with the settings of one that ended or
// failed, for an automation's retry after an infrastructure failure (issue 18). The create
// goes through Create, so the organization's limits, balance and image policy apply as they
// do to any create.
#include "base/time.h"
#include "core/sandbox_service.h"

namespace adapt::core {
namespace {

NetworkRequest NetworkRequestOf(const store::NetworkConfig& n) {
  NetworkRequest r;
  r.egress = n.egress;
  r.dns = n.dns;
  std::vector<AllowRuleRequest> allow;
  for (const auto& a : n.allow) allow.push_back({a.protocol, a.address, a.port});
  r.allow = std::move(allow);
  std::vector<HostnameRuleRequest> hostnames;
  for (const auto& h : n.hostnames) hostnames.push_back({h.hostname, h.port});
  r.hostnames = std::move(hostnames);
  return r;
}

StartupList ListOf(const std::optional<std::vector<std::string>>& items) {
  StartupList l;
  l.given = items.has_value();
  l.items = items;
  return l;
}

StartupRequest StartupRequestOf(const store::StartupConfig& s) {
  StartupRequest r;
  r.mode = s.mode;
  r.argv = ListOf(s.argv);
  r.args = ListOf(s.args);
  r.entrypoint = ListOf(s.entrypoint);
  r.cwd = s.cwd;
  r.user = s.user;
  return r;
}

}  // namespace

Result<Sandbox> SandboxService::Replace(const std::string& org_id, const std::string& id,
                                        const std::map<std::string, std::string>& platform_labels) {
  ASSIGN_OR_RETURN(store::SandboxRecord old, store_.GetSandbox(org_id, id));
  if (old.status == "deleting" || old.status == "deleted")
    return NotFound("sandbox '" + id + "' not found");
  const SandboxConfig& c = old.config;
  if (c.startup_class != "instant") {
    return Conflict("sandbox '" + id + "' is durable: its storage cannot move to a fresh sandbox");
  }
  CreateSandbox req;
  // Its deadline stays where it was: a replacement does not extend the sandbox's TTL. A second
  // is kept back for the create itself, whose clock reading comes later than this one.
  if (old.expires_at) {
    int64_t left = (*old.expires_at - NowMillis() - 1000) / 1000;
    if (left < 1) return NotFound("sandbox '" + id + "' expired");
    req.ttl_seconds = left;
  } else {
    req.no_expiry = true;
  }
  req.cpu = c.cpu;
  req.memory_mib = c.memory_mib;
  req.disk_mib = c.disk_mib;
  req.labels = CallerLabels(c.labels);
  req.platform_labels = platform_labels;
  if (c.image_id)
    req.image_id = c.image_id;
  else
    req.image = c.image;
  req.network = NetworkRequestOf(c.network);
  if (c.startup) req.startup = StartupRequestOf(*c.startup);
  req.env = old.env;
  for (const auto& s : c.secrets) req.secrets.push_back(s.name);
  req.security_profile = c.security_profile;
  req.startup_class = c.startup_class;
  req.idle_timeout_seconds = c.idle_timeout_seconds;
  req.database = c.database;
  Principal who;
  who.org_id = org_id;
  auto made = Create(who, req, std::nullopt);
  if (!made.ok()) return made.status().WithContext("replacing sandbox '" + id + "'");
  return made;
}

Result<std::vector<store::SandboxRecord>> SandboxService::ListLabelled(const std::string& key) {
  ASSIGN_OR_RETURN(auto sandboxes,
                   store_.ListSandboxesWithStatus({"provisioning", "running", "stopped",
                                                   "hibernated", "completed", "failed"}));
  std::erase_if(sandboxes,
                [&](const store::SandboxRecord& s) { return !s.config.labels.count(key); });
  return sandboxes;
}

}  // namespace adapt::core
