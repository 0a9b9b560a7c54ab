#include "store/sandbox_config_codec.h"

#include <nlohmann/json.hpp>

namespace adapt::store {
namespace {

using nlohmann::json;

json OptionalText(const std::optional<std::string>& s) { return s ? json(*s) : json(nullptr); }

std::optional<std::string> ReadText(const json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_string()) return std::nullopt;
  return j[key].get<std::string>();
}

json OptionalList(const std::optional<std::vector<std::string>>& v) {
  return v ? json(*v) : json(nullptr);
}

std::optional<std::vector<std::string>> ReadList(const json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_array()) return std::nullopt;
  std::vector<std::string> out;
  for (const auto& e : j[key])
    if (e.is_string()) out.push_back(e.get<std::string>());
  return out;
}

json EncodeNetwork(const NetworkConfig& n) {
  json allow = json::array(), hostnames = json::array();
  for (const auto& r : n.allow)
    allow.push_back({{"protocol", r.protocol}, {"address", r.address}, {"port", r.port}});
  for (const auto& h : n.hostnames)
    hostnames.push_back({{"hostname", h.hostname}, {"port", h.port}});
  json out = {{"egress", n.egress},
              {"allow", allow},
              {"dns", OptionalText(n.dns)},
              {"hostnames", hostnames}};
  if (n.dns_disabled) out["dnsDisabled"] = true;
  return out;
}

NetworkConfig DecodeNetwork(const json& j) {
  NetworkConfig n;
  if (!j.is_object()) return n;
  n.egress = j.value("egress", "open");
  if (j.contains("allow") && j["allow"].is_array())
    for (const auto& r : j["allow"])
      if (r.is_object())
        n.allow.push_back({r.value("protocol", "tcp"), r.value("address", ""), r.value("port", 0)});
  n.dns = ReadText(j, "dns");
  n.dns_disabled =
      j.contains("dnsDisabled") && j["dnsDisabled"].is_boolean() && j["dnsDisabled"].get<bool>();
  if (j.contains("hostnames") && j["hostnames"].is_array())
    for (const auto& h : j["hostnames"])
      if (h.is_object()) n.hostnames.push_back({h.value("hostname", ""), h.value("port", 0)});
  return n;
}

json EncodeStartup(const std::optional<StartupConfig>& s) {
  if (!s) return nullptr;
  return {{"mode", s->mode},
          {"argv", OptionalList(s->argv)},
          {"args", OptionalList(s->args)},
          {"entrypoint", OptionalList(s->entrypoint)},
          {"cwd", OptionalText(s->cwd)},
          {"user", OptionalText(s->user)}};
}

std::optional<StartupConfig> DecodeStartup(const json& j) {
  if (!j.is_object()) return std::nullopt;
  StartupConfig s;
  s.mode = j.value("mode", "image");
  s.argv = ReadList(j, "argv");
  s.args = ReadList(j, "args");
  s.entrypoint = ReadList(j, "entrypoint");
  s.cwd = ReadText(j, "cwd");
  s.user = ReadText(j, "user");
  return s;
}

}  // namespace

std::string EncodeSandboxConfig(const SandboxConfig& c) {
  json labels = json::object();
  for (const auto& [k, v] : c.labels) labels[k] = v;
  json secrets = json::array();
  for (const auto& s : c.secrets) secrets.push_back({{"name", s.name}, {"version", s.version}});
  json j = {{"cpu", c.cpu},
            {"memoryMiB", c.memory_mib},
            {"diskMiB", c.disk_mib},
            {"ttlSeconds", c.ttl_seconds ? json(*c.ttl_seconds) : json(nullptr)},
            {"labels", labels},
            {"image", c.image},
            {"imageId", OptionalText(c.image_id)},
            {"network", EncodeNetwork(c.network)},
            {"startup", EncodeStartup(c.startup)},
            {"securityProfile", c.security_profile},
            {"startupClass", c.startup_class},
            {"storage", OptionalText(c.storage)},
            {"secrets", secrets}};
  if (c.idle_timeout_seconds) j["idleTimeoutSeconds"] = *c.idle_timeout_seconds;
  if (c.database) j["database"] = true;
  if (c.forked_from)
    j["forkedFrom"] = {{"sandboxId", c.forked_from->sandbox_id},
                       {"checkpoint", c.forked_from->checkpoint}};
  if (c.gpus > 0) j["gpus"] = c.gpus;
  if (c.pool)
    j["pool"] = {{"used", c.pool->used},
                 {"reason", c.pool->used ? json(nullptr) : json(c.pool->reason)}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

SandboxConfig DecodeSandboxConfig(const std::string& text) {
  json j = json::parse(text);
  SandboxConfig c;
  if (!j.is_object()) return c;
  c.cpu = j.value("cpu", 1);
  c.memory_mib = j.value("memoryMiB", int64_t{1024});
  c.disk_mib = j.value("diskMiB", int64_t{2048});
  c.gpus = j.value("gpus", 0);
  if (j.contains("ttlSeconds") && j["ttlSeconds"].is_number_integer())
    c.ttl_seconds = j["ttlSeconds"].get<int64_t>();
  if (j.contains("labels") && j["labels"].is_object())
    for (const auto& [k, v] : j["labels"].items())
      if (v.is_string()) c.labels[k] = v.get<std::string>();
  c.image = j.value("image", "");
  c.image_id = ReadText(j, "imageId");
  if (j.contains("network")) c.network = DecodeNetwork(j["network"]);
  if (j.contains("startup")) c.startup = DecodeStartup(j["startup"]);
  c.security_profile = j.value("securityProfile", "restricted");
  c.startup_class = j.value("startupClass", "instant");
  c.storage = ReadText(j, "storage");
  c.database = j.value("database", false);
  if (j.contains("secrets") && j["secrets"].is_array())
    for (const auto& s : j["secrets"])
      if (s.is_object()) c.secrets.push_back({s.value("name", ""), s.value("version", int64_t{0})});
  if (j.contains("idleTimeoutSeconds") && j["idleTimeoutSeconds"].is_number_integer())
    c.idle_timeout_seconds = j["idleTimeoutSeconds"].get<int64_t>();
  if (j.contains("forkedFrom") && j["forkedFrom"].is_object())
    c.forked_from = ForkSourceConfig{j["forkedFrom"].value("sandboxId", ""),
                                     j["forkedFrom"].value("checkpoint", "")};
  if (j.contains("pool") && j["pool"].is_object()) {
    const json& p = j["pool"];
    c.pool = PoolUseConfig{p.value("used", false), p.contains("reason") && p["reason"].is_string()
                                                       ? p["reason"].get<std::string>()
                                                       : ""};
  }
  return c;
}

std::string EncodeSandboxResult(const SandboxResult& r) {
  json j = json::object();
  if (r.exit_code) j["exitCode"] = *r.exit_code;
  if (r.signal) j["signal"] = *r.signal;
  if (r.error) j["error"] = *r.error;
  if (r.started_at) j["startedAt"] = *r.started_at;
  if (r.finished_at) j["finishedAt"] = *r.finished_at;
  if (!r.stdout_text.empty()) j["stdout"] = r.stdout_text;
  if (!r.stderr_text.empty()) j["stderr"] = r.stderr_text;
  if (r.truncated) j["truncated"] = true;
  if (r.hibernation) {
    const HibernationState& h = *r.hibernation;
    j["hibernation"] = {{"phase", h.phase},
                        {"workspaceKept", h.workspace_kept},
                        {"processesSaved", h.processes_saved},
                        {"stoppedAt", h.stopped_at},
                        {"note", h.note},
                        {"restart", h.restart}};
  }
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

SandboxResult DecodeSandboxResult(const std::string& text) {
  json j = json::parse(text);
  SandboxResult r;
  if (!j.is_object()) return r;
  if (j.contains("exitCode") && j["exitCode"].is_number_integer())
    r.exit_code = j["exitCode"].get<int64_t>();
  r.signal = ReadText(j, "signal");
  r.error = ReadText(j, "error");
  r.started_at = ReadText(j, "startedAt");
  r.finished_at = ReadText(j, "finishedAt");
  r.stdout_text = j.value("stdout", "");
  r.stderr_text = j.value("stderr", "");
  r.truncated = j.value("truncated", false);
  if (j.contains("hibernation") && j["hibernation"].is_object()) {
    const json& h = j["hibernation"];
    r.hibernation = HibernationState{h.value("phase", ""),
                                     h.value("workspaceKept", false),
                                     h.value("processesSaved", false),
                                     h.value("stoppedAt", int64_t{0}),
                                     h.value("note", ""),
                                     h.value("restart", false)};
  }
  return r;
}

}  // namespace adapt::store
