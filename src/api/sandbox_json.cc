#include "api/sandbox_json.h"

#include <limits>
#include <set>

#include "base/time.h"

namespace adapt::api {
namespace {

using nlohmann::json;

bool Given(const json& obj, const char* key) { return obj.contains(key) && !obj[key].is_null(); }

Status CheckKnownFields(const json& obj, const std::set<std::string>& known,
                        const std::string& prefix) {
  for (const auto& [key, _] : obj.items()) {
    if (!known.count(key))
      return InvalidArgument(prefix + key, "unknown field '" + prefix + key + "'");
  }
  return Status::Ok();
}

// An integer as sent; one past int64's range is kept as the largest (the core refuses it).
Result<int64_t> Integer(const json& v, const std::string& field, const std::string& message) {
  if (!v.is_number_integer()) return InvalidArgument(field, message);
  if (v.is_number_unsigned() &&
      v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    return std::numeric_limits<int64_t>::max();
  return v.get<int64_t>();
}

Result<std::optional<int64_t>> OptionalInteger(const json& body, const char* field) {
  if (!body.contains(field)) return std::optional<int64_t>();
  ASSIGN_OR_RETURN(int64_t n,
                   Integer(body[field], field, std::string(field) + " must be an integer"));
  return std::optional<int64_t>(n);
}

Result<std::optional<std::string>> OptionalString(const json& obj, const char* key,
                                                  const std::string& field,
                                                  const std::string& message) {
  if (!Given(obj, key)) return std::optional<std::string>();
  if (!obj[key].is_string()) return InvalidArgument(field, message);
  return std::optional<std::string>(obj[key].get<std::string>());
}

Result<std::map<std::string, std::string>> StringMap(const json& body, const char* field,
                                                     const std::string& object_message,
                                                     const std::string& value_message) {
  std::map<std::string, std::string> out;
  if (!Given(body, field)) return out;
  const json& m = body[field];
  if (!m.is_object()) return InvalidArgument(field, object_message);
  for (const auto& [key, value] : m.items()) {
    if (!value.is_string()) return InvalidArgument(std::string(field) + "." + key, value_message);
    out[key] = value.get<std::string>();
  }
  return out;
}

Result<core::StartupList> StringList(const json& obj, const char* key, const std::string& field,
                                     bool allow_null) {
  core::StartupList list;
  if (!obj.contains(key)) return list;
  list.given = true;
  const json& v = obj[key];
  if (v.is_null() && allow_null) return list;
  std::string message = field + " must be an array of strings";
  if (!v.is_array()) return InvalidArgument(field, message);
  std::vector<std::string> items;
  for (const auto& e : v) {
    if (!e.is_string()) return InvalidArgument(field, message);
    items.push_back(e.get<std::string>());
  }
  list.items = std::move(items);
  return list;
}

Result<int64_t> Port(const json& v, const std::string& field) {
  return Integer(v, field, field + " must be an integer from 1 to 65535");
}

Result<std::vector<core::AllowRuleRequest>> AllowFromJson(const json& list) {
  if (!list.is_array()) return InvalidArgument("network.allow", "network.allow must be an array");
  std::vector<core::AllowRuleRequest> out;
  for (size_t i = 0; i < list.size(); ++i) {
    std::string f = "network.allow[" + std::to_string(i) + "]";
    const json& r = list[i];
    if (!r.is_object())
      return InvalidArgument(
          f, f + " must be an object such as "
                 "{\"protocol\": \"tcp\", \"address\": \"1.1.1.1\", \"port\": 443}");
    RETURN_IF_ERROR(CheckKnownFields(r, {"protocol", "address", "port"}, f + "."));
    for (const char* k : {"protocol", "address", "port"})
      if (!r.contains(k)) return InvalidArgument(f + "." + k, f + "." + k + " is required");
    if (!r["protocol"].is_string())
      return InvalidArgument(f + ".protocol", f + ".protocol must be \"tcp\" or \"udp\"");
    if (!r["address"].is_string())
      return InvalidArgument(f + ".address", f + ".address must be an IP address string");
    ASSIGN_OR_RETURN(int64_t port, Port(r["port"], f + ".port"));
    out.push_back({r["protocol"].get<std::string>(), r["address"].get<std::string>(), port});
  }
  return out;
}

Result<std::vector<core::HostnameRuleRequest>> HostnamesFromJson(const json& list) {
  if (!list.is_array())
    return InvalidArgument("network.hostnames", "network.hostnames must be an array");
  std::vector<core::HostnameRuleRequest> out;
  for (size_t i = 0; i < list.size(); ++i) {
    std::string f = "network.hostnames[" + std::to_string(i) + "]";
    const json& r = list[i];
    if (!r.is_object())
      return InvalidArgument(f, f + " must be an object such as "
                                    "{\"hostname\": \"api.openai.com\", \"port\": 443}");
    RETURN_IF_ERROR(CheckKnownFields(r, {"hostname", "port"}, f + "."));
    if (!r.contains("hostname") || !r["hostname"].is_string())
      return InvalidArgument(f + ".hostname",
                             f + ".hostname must be an exact ASCII (punycode) host name; "
                                 "wildcards and addresses are not accepted");
    if (!r.contains("port")) return InvalidArgument(f + ".port", f + ".port is required");
    ASSIGN_OR_RETURN(int64_t port, Port(r["port"], f + ".port"));
    out.push_back({r["hostname"].get<std::string>(), port});
  }
  return out;
}

Result<std::optional<core::NetworkRequest>> NetworkFromJson(const json& body) {
  if (!Given(body, "network")) return std::optional<core::NetworkRequest>();
  const json& n = body["network"];
  if (!n.is_object()) return InvalidArgument("network", "network must be an object");
  RETURN_IF_ERROR(CheckKnownFields(n, {"egress", "allow", "dns", "hostnames"}, "network."));
  core::NetworkRequest out;
  if (n.contains("egress")) {
    if (!n["egress"].is_string())
      return InvalidArgument("network.egress",
                             "network.egress must be one of open, none, allowlist");
    out.egress = n["egress"].get<std::string>();
  }
  if (Given(n, "allow")) {
    ASSIGN_OR_RETURN(out.allow, AllowFromJson(n["allow"]));
  }
  if (Given(n, "hostnames")) {
    ASSIGN_OR_RETURN(out.hostnames, HostnamesFromJson(n["hostnames"]));
  }
  if (n.contains("dns")) {
    if (n["dns"].is_null()) {
      out.dns_cleared = true;
    } else if (!n["dns"].is_string()) {
      return InvalidArgument("network.dns", "network.dns must be an IP address string");
    } else {
      out.dns = n["dns"].get<std::string>();
    }
  }
  return std::optional<core::NetworkRequest>(std::move(out));
}

Result<std::optional<core::StartupRequest>> StartupFromJson(const json& body) {
  if (!Given(body, "startup")) return std::optional<core::StartupRequest>();
  const json& s = body["startup"];
  if (!s.is_object()) return InvalidArgument("startup", "startup must be an object");
  RETURN_IF_ERROR(
      CheckKnownFields(s, {"mode", "argv", "args", "entrypoint", "cwd", "user"}, "startup."));
  core::StartupRequest out;
  if (s.contains("mode")) {
    if (!s["mode"].is_string())
      return InvalidArgument("startup.mode", "startup.mode must be \"image\" or \"command\"");
    out.mode = s["mode"].get<std::string>();
  }
  ASSIGN_OR_RETURN(out.argv, StringList(s, "argv", "startup.argv", false));
  ASSIGN_OR_RETURN(out.args, StringList(s, "args", "startup.args", true));
  ASSIGN_OR_RETURN(out.entrypoint, StringList(s, "entrypoint", "startup.entrypoint", true));
  ASSIGN_OR_RETURN(out.cwd,
                   OptionalString(s, "cwd", "startup.cwd", "startup.cwd must be an absolute path"));
  ASSIGN_OR_RETURN(out.user, OptionalString(s, "user", "startup.user",
                                            "startup.user must be \"uid[:gid]\" or "
                                            "\"name[:group]\""));
  return std::optional<core::StartupRequest>(std::move(out));
}

json Time(const std::optional<int64_t>& ms) {
  return ms ? json(FormatRfc3339(*ms)) : json(nullptr);
}

json Text(const std::optional<std::string>& s) { return s ? json(*s) : json(nullptr); }

json List(const std::optional<std::vector<std::string>>& v) { return v ? json(*v) : json(nullptr); }

json NetworkToJson(const core::NetworkConfig& n) {
  json allow = json::array(), hostnames = json::array();
  for (const auto& r : n.allow)
    allow.push_back({{"protocol", r.protocol}, {"address", r.address}, {"port", r.port}});
  for (const auto& h : n.hostnames)
    hostnames.push_back({{"hostname", h.hostname}, {"port", h.port}});
  return {{"egress", n.egress}, {"allow", allow}, {"dns", Text(n.dns)}, {"hostnames", hostnames}};
}

json StartupToJson(const core::StartupView& v) {
  const core::StartupConfig& s = v.settings;
  return {{"mode", s.mode},
          {"argv", List(s.argv)},
          {"args", List(s.args)},
          {"entrypoint", List(s.entrypoint)},
          {"cwd", Text(s.cwd)},
          {"user", Text(s.user)},
          {"exitCode", v.exit_code ? json(*v.exit_code) : json(nullptr)},
          {"signal", Text(v.signal)},
          {"error", Text(v.error)},
          {"startedAt", Text(v.started_at)},
          {"finishedAt", Text(v.finished_at)},
          {"stdout", v.stdout_text},
          {"stderr", v.stderr_text},
          {"truncated", v.truncated}};
}

json HibernationToJson(const std::optional<core::HibernationSummary>& h) {
  if (!h) return nullptr;
  return {{"stoppedAt", FormatRfc3339(h->stopped_at)},
          {"workspace", h->workspace},
          {"processes", h->processes},
          {"note", Text(h->note)}};
}

}  // namespace

json EndpointJson(const core::Endpoint& e) {
  return {{"id", e.id},
          {"sandboxId", e.sandbox_id},
          {"port", e.port},
          {"hostname", e.hostname},
          {"url", e.url},
          {"httpUrl", e.http_url},
          {"createdAt", FormatRfc3339(e.created_at_ms)}};
}

const core::FieldNames& RestSandboxFields() {
  static const core::FieldNames kNames({{"memory_mib", "memoryMiB"},
                                        {"disk_mib", "diskMiB"},
                                        {"ttl_seconds", "ttlSeconds"},
                                        {"idle_timeout_seconds", "idleTimeoutSeconds"},
                                        {"image_id", "imageId"},
                                        {"security_profile", "securityProfile"},
                                        {"startup_class", "startupClass"},
                                        {"from_checkpoint", "fromCheckpoint"}});
  return kNames;
}

Result<core::ForkSandbox> ForkSandboxFromJson(const json& body) {
  if (!body.is_object()) return InvalidArgument("", "the request body must be a JSON object");
  // A fork takes every other setting from its checkpoint's sandbox.
  for (const auto& [key, _] : body.items())
    if (key != "fromCheckpoint" && key != "ttlSeconds" && key != "labels")
      return InvalidArgument(key, key +
                                      " cannot be given with fromCheckpoint: a fork has the "
                                      "settings of its checkpoint's sandbox (only ttlSeconds and "
                                      "labels may differ)");
  core::ForkSandbox req;
  if (!body["fromCheckpoint"].is_string())
    return InvalidArgument("fromCheckpoint",
                           "fromCheckpoint must be a string \"<sandboxId>/<checkpoint name>\"");
  req.from_checkpoint = body["fromCheckpoint"].get<std::string>();
  if (body.contains("ttlSeconds") && body["ttlSeconds"].is_null()) {
    req.no_expiry = true;
  } else {
    ASSIGN_OR_RETURN(req.ttl_seconds, OptionalInteger(body, "ttlSeconds"));
  }
  if (Given(body, "labels")) {
    ASSIGN_OR_RETURN(req.labels, StringMap(body, "labels", "labels must be an object of strings",
                                           "label values must be strings"));
  }
  return req;
}

Result<core::CreateSandbox> CreateSandboxFromJson(const json& body) {
  if (!body.is_object()) return InvalidArgument("", "the request body must be a JSON object");
  RETURN_IF_ERROR(
      CheckKnownFields(body,
                       {"cpu", "memoryMiB", "diskMiB", "ttlSeconds", "labels", "image", "imageId",
                        "network", "startup", "env", "secrets", "gpu", "securityProfile",
                        "startupClass", "storage", "idleTimeoutSeconds", "database"},
                       ""));
  core::CreateSandbox req;
  ASSIGN_OR_RETURN(req.cpu, OptionalInteger(body, "cpu"));
  ASSIGN_OR_RETURN(req.memory_mib, OptionalInteger(body, "memoryMiB"));
  ASSIGN_OR_RETURN(req.disk_mib, OptionalInteger(body, "diskMiB"));
  if (body.contains("ttlSeconds") && body["ttlSeconds"].is_null()) {
    req.no_expiry = true;
  } else {
    ASSIGN_OR_RETURN(req.ttl_seconds, OptionalInteger(body, "ttlSeconds"));
  }
  if (!(body.contains("idleTimeoutSeconds") && body["idleTimeoutSeconds"].is_null())) {
    ASSIGN_OR_RETURN(req.idle_timeout_seconds, OptionalInteger(body, "idleTimeoutSeconds"));
  }
  ASSIGN_OR_RETURN(req.labels, StringMap(body, "labels", "labels must be an object of strings",
                                         "label values must be strings"));
  ASSIGN_OR_RETURN(req.image,
                   OptionalString(body, "image", "image",
                                  "image must be an image reference such as \"debian:12\""));
  ASSIGN_OR_RETURN(req.image_id,
                   OptionalString(body, "imageId", "imageId",
                                  "imageId must be the id of an image (\"img_...\")"));
  ASSIGN_OR_RETURN(req.network, NetworkFromJson(body));
  ASSIGN_OR_RETURN(req.startup, StartupFromJson(body));
  ASSIGN_OR_RETURN(req.env, StringMap(body, "env", "env must be an object of strings",
                                      "environment values must be strings"));
  if (Given(body, "secrets")) {
    if (!body["secrets"].is_array())
      return InvalidArgument("secrets", "secrets must be an array of names");
    for (size_t i = 0; i < body["secrets"].size(); ++i) {
      std::string field = "secrets[" + std::to_string(i) + "]";
      if (!body["secrets"][i].is_string())
        return InvalidArgument(field, field + " must be a secret name");
      req.secrets.push_back(body["secrets"][i].get<std::string>());
    }
  }
  if (Given(body, "gpu")) {
    if (!body["gpu"].is_object())
      return InvalidArgument("gpu", "gpu must be an object such as {\"type\": \"...\"}");
    req.gpu = true;
  }
  ASSIGN_OR_RETURN(req.security_profile,
                   OptionalString(body, "securityProfile", "securityProfile",
                                  "securityProfile must be one of restricted, developer"));
  ASSIGN_OR_RETURN(req.startup_class,
                   OptionalString(body, "startupClass", "startupClass",
                                  "startupClass must be one of durable, instant"));
  ASSIGN_OR_RETURN(req.storage, OptionalString(body, "storage", "storage",
                                               "storage must be the name of persistent storage"));
  if (Given(body, "database")) {
    if (!body["database"].is_boolean())
      return InvalidArgument("database", "database must be true or false");
    req.database = body["database"].get<bool>();
  }
  return req;
}

json SandboxToJson(const core::Sandbox& s) {
  const core::SandboxConfig& c = s.config;
  json labels = json::object();
  for (const auto& [k, v] : c.labels) labels[k] = v;
  json endpoints = json::array();
  for (const auto& e : s.endpoints) endpoints.push_back(EndpointJson(e));
  json out = {
      {"id", s.id},
      {"status", s.status},
      {"createdAt", FormatRfc3339(s.created_at)},
      {"updatedAt", FormatRfc3339(s.updated_at)},
      {"expiresAt", Time(s.expires_at)},
      {"deletedAt", Time(s.deleted_at)},
      {"cpu", c.cpu},
      {"memoryMiB", c.memory_mib},
      {"diskMiB", c.disk_mib},
      {"ttlSeconds", c.ttl_seconds ? json(*c.ttl_seconds) : json(nullptr)},
      // Hibernated after this many seconds without use; null: never.
      {"idleTimeoutSeconds",
       c.idle_timeout_seconds ? json(*c.idle_timeout_seconds) : json(nullptr)},
      {"labels", labels},
      {"image", c.image},
      {"imageId", Text(c.image_id)},
      {"network", NetworkToJson(c.network)},
      {"securityProfile", c.security_profile},
      {"startupClass", c.startup_class},
      // The persistent storage mounted at /workspace (durable sandboxes), else null.
      {"storage", Text(c.storage)},
      {"terminationReason", Text(s.termination_reason)},
      {"error", Text(s.error)},
      {"endpoints", endpoints},
      {"hibernation", HibernationToJson(s.hibernation)},
  };
  // Whether a warm pool served the create (and why not), when adaptd has warm pools.
  if (c.pool)
    out["pool"] = {{"used", c.pool->used},
                   {"reason", c.pool->used ? json(nullptr) : json(c.pool->reason)}};
  // Attached secrets: the names and versions captured at creation (never values).
  json secret_names = json::array();
  for (const auto& secret : c.secrets) secret_names.push_back(secret.name);
  out["secrets"] = secret_names;
  json names = json::array(), sources = json::array();
  for (const auto& e : s.environment) {
    names.push_back(e.name);
    json source = {{"name", e.name}, {"source", e.source}};
    if (e.version) source["version"] = *e.version;
    sources.push_back(source);
  }
  out["environmentNames"] = names;
  out["environmentSources"] = sources;
  out["startup"] = s.startup ? StartupToJson(*s.startup) : json(nullptr);
  return out;
}

json SandboxPageToJson(const core::SandboxPage& page) {
  json items = json::array();
  for (const auto& s : page.items) items.push_back(SandboxToJson(s));
  return {{"items", items}, {"nextCursor", Text(page.next_cursor)}};
}

}  // namespace adapt::api
