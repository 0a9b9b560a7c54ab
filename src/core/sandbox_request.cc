#include "core/sandbox_request.h"

#include <cctype>
#include <set>

#include "core/sandbox_limits.h"
#include "core/secret_name.h"
#include "net/address.h"
#include "storage/volume_request.h"

namespace adapt::core {
namespace {

using nlohmann::json;

bool HasNul(const std::string& s) { return s.find('\0') != std::string::npos; }

Result<int64_t> IntegerIn(const json& body, const char* field, int64_t min, int64_t max,
                          int64_t fallback) {
  if (!body.contains(field)) return fallback;
  const json& v = body[field];
  if (!v.is_number_integer())
    return InvalidArgument(field, std::string(field) + " must be an integer");
  // Compare as signed: an unsigned value past int64 range is out of range anyway.
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(max))
    return InvalidArgument(field, std::string(field) + " must be between " + std::to_string(min) +
                                      " and " + std::to_string(max));
  int64_t n = v.get<int64_t>();
  if (n < min || n > max)
    return InvalidArgument(field, std::string(field) + " must be between " + std::to_string(min) +
                                      " and " + std::to_string(max));
  return n;
}

Status CheckKnownFields(const json& obj, const std::set<std::string>& known,
                        const std::string& prefix) {
  for (const auto& [key, _] : obj.items()) {
    if (!known.count(key))
      return InvalidArgument(prefix + key, "unknown field '" + prefix + key + "'");
  }
  return Status::Ok();
}

Result<json> StringArray(const json& v, const std::string& field, bool allow_null) {
  if (v.is_null() && allow_null) return json(nullptr);
  if (!v.is_array()) return InvalidArgument(field, field + " must be an array of strings");
  size_t bytes = 0;
  for (const auto& e : v) {
    if (!e.is_string()) return InvalidArgument(field, field + " must be an array of strings");
    const auto& s = e.get_ref<const std::string&>();
    if (HasNul(s)) return InvalidArgument(field, field + " must not contain NUL bytes");
    bytes += s.size() + 1;
  }
  if (bytes > limits::kMaxArgvBytes)
    return InvalidArgument(field,
                           field + " exceeds " + std::to_string(limits::kMaxArgvBytes) + " bytes");
  return v;
}

Result<json> ParseLabels(const json& body) {
  if (!body.contains("labels") || body["labels"].is_null()) return json::object();
  const json& labels = body["labels"];
  if (!labels.is_object()) return InvalidArgument("labels", "labels must be an object of strings");
  if (labels.size() > limits::kMaxLabels)
    return InvalidArgument("labels",
                           "at most " + std::to_string(limits::kMaxLabels) + " labels are allowed");
  for (const auto& [key, value] : labels.items()) {
    std::string field = "labels." + key;
    if (key.empty() || key.size() > limits::kMaxLabelKeyBytes || HasNul(key))
      return InvalidArgument("labels", "label keys must be 1 to 63 bytes");
    if (key.rfind("platform.", 0) == 0)
      return InvalidArgument(field, "label keys beginning with 'platform.' are reserved");
    if (!value.is_string()) return InvalidArgument(field, "label values must be strings");
    const auto& s = value.get_ref<const std::string&>();
    if (s.size() > limits::kMaxLabelValueBytes || HasNul(s))
      return InvalidArgument(field, "label values must be at most 256 bytes");
  }
  return labels;
}

Result<std::map<std::string, std::string>> ParseEnv(const json& body) {
  std::map<std::string, std::string> env;
  if (!body.contains("env") || body["env"].is_null()) return env;
  const json& e = body["env"];
  if (!e.is_object()) return InvalidArgument("env", "env must be an object of strings");
  for (const auto& [key, value] : e.items()) {
    bool valid = !key.empty() && !(key[0] >= '0' && key[0] <= '9');
    for (char c : key) {
      valid = valid && (c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                        (c >= '0' && c <= '9'));
    }
    if (!valid)
      return InvalidArgument("env." + key,
                             "environment variable names must match [A-Za-z_][A-Za-z0-9_]*");
    if (!value.is_string())
      return InvalidArgument("env." + key, "environment values must be strings");
    const auto& s = value.get_ref<const std::string&>();
    if (HasNul(s))
      return InvalidArgument("env." + key, "environment values must not contain NUL bytes");
    env[key] = s;
  }
  return env;
}

constexpr size_t kMaxNetworkRules = 64;  // seed 001: "Use up to 64 rules"

// A literal public IPv4/IPv6 address: no CIDR, no hostname, nothing egress may never reach.
Result<std::string> PublicAddress(const json& v, const std::string& field) {
  if (!v.is_string()) return InvalidArgument(field, field + " must be an IP address string");
  std::string text = v;
  auto ip = net::ParseIp(text);
  if (!ip)
    return InvalidArgument(field, field +
                                      " must be one IPv4 or IPv6 address (no CIDR, no "
                                      "hostname): '" +
                                      text.substr(0, 64) + "'");
  if (net::IsBlockedDestination(*ip))
    return InvalidArgument(field, field + " " + ip->text +
                                      " is a private, local or reserved address; only public "
                                      "addresses can be allowed");
  return ip->text;
}

Result<int> Port(const json& v, const std::string& field) {
  if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > 65535)
    return InvalidArgument(field, field + " must be an integer from 1 to 65535");
  return v.get<int>();
}

Result<json> ParseAllow(const json& list) {
  if (!list.is_array()) return InvalidArgument("network.allow", "network.allow must be an array");
  if (list.size() > kMaxNetworkRules)
    return InvalidArgument("network.allow", "network.allow has " + std::to_string(list.size()) +
                                                " rules; at most 64 are allowed");
  json out = json::array();
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
    if (!r["protocol"].is_string() || (r["protocol"] != "tcp" && r["protocol"] != "udp"))
      return InvalidArgument(f + ".protocol", f + ".protocol must be \"tcp\" or \"udp\"");
    ASSIGN_OR_RETURN(std::string address, PublicAddress(r["address"], f + ".address"));
    ASSIGN_OR_RETURN(int port, Port(r["port"], f + ".port"));
    out.push_back({{"protocol", r["protocol"]}, {"address", address}, {"port", port}});
  }
  return out;
}

// Exact ASCII names (punycode for the rest): letters, digits, hyphens, dots; no wildcards.
bool IsExactHostname(const std::string& h) {
  if (h.empty() || h.size() > 253 || h.front() == '.' || h.back() == '.') return false;
  size_t label = 0;
  for (char c : h) {
    if (c == '.') {
      if (label == 0) return false;
      label = 0;
      continue;
    }
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
    if (!ok || ++label > 63) return false;
  }
  return h.find('.') != std::string::npos && !net::ParseIp(h);
}

Result<json> ParseHostnames(const json& list) {
  if (!list.is_array())
    return InvalidArgument("network.hostnames", "network.hostnames must be an array");
  if (list.size() > kMaxNetworkRules)
    return InvalidArgument(
        "network.hostnames",
        "network.hostnames has " + std::to_string(list.size()) + " rules; at most 64 are allowed");
  json out = json::array();
  for (size_t i = 0; i < list.size(); ++i) {
    std::string f = "network.hostnames[" + std::to_string(i) + "]";
    const json& r = list[i];
    if (!r.is_object())
      return InvalidArgument(f, f + " must be an object such as "
                                    "{\"hostname\": \"api.openai.com\", \"port\": 443}");
    RETURN_IF_ERROR(CheckKnownFields(r, {"hostname", "port"}, f + "."));
    if (!r.contains("hostname") || !r["hostname"].is_string() ||
        !IsExactHostname(r["hostname"].get<std::string>()))
      return InvalidArgument(f + ".hostname",
                             f + ".hostname must be an exact ASCII (punycode) host name; "
                                 "wildcards and addresses are not accepted");
    if (!r.contains("port")) return InvalidArgument(f + ".port", f + ".port is required");
    ASSIGN_OR_RETURN(int port, Port(r["port"], f + ".port"));
    std::string host = r["hostname"];
    for (auto& c : host) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out.push_back({{"hostname", host}, {"port", port}});
  }
  return out;
}

Result<json> ParseNetwork(const json& body) {
  // Seed 001: public internet is the default.
  json net = {
      {"egress", "open"}, {"allow", json::array()}, {"dns", nullptr}, {"hostnames", json::array()}};
  if (!body.contains("network") || body["network"].is_null()) return net;
  const json& n = body["network"];
  if (!n.is_object()) return InvalidArgument("network", "network must be an object");
  RETURN_IF_ERROR(CheckKnownFields(n, {"egress", "allow", "dns", "hostnames"}, "network."));
  if (n.contains("egress")) {
    if (!n["egress"].is_string() ||
        (n["egress"] != "open" && n["egress"] != "none" && n["egress"] != "allowlist"))
      return InvalidArgument("network.egress",
                             "network.egress must be one of open, none, allowlist");
    net["egress"] = n["egress"];
  }
  const std::string egress = net["egress"];
  for (const char* list : {"allow", "hostnames"}) {
    if (!n.contains(list) || n[list].is_null()) continue;
    if (egress != "allowlist" && !(n[list].is_array() && n[list].empty()))
      return InvalidArgument(std::string("network.") + list,
                             std::string("network.") + list + " needs egress \"allowlist\"");
  }
  if (n.contains("allow") && !n["allow"].is_null()) {
    ASSIGN_OR_RETURN(net["allow"], ParseAllow(n["allow"]));
  }
  if (n.contains("hostnames") && !n["hostnames"].is_null()) {
    ASSIGN_OR_RETURN(net["hostnames"], ParseHostnames(n["hostnames"]));
  }
  if (n.contains("dns") && !n["dns"].is_null()) {
    if (egress == "none")
      return InvalidArgument("network.dns", "network.dns needs network egress; it is \"none\"");
    ASSIGN_OR_RETURN(std::string dns, PublicAddress(n["dns"], "network.dns"));
    net["dns"] = dns;
  }
  // Seed 001: DNS cannot be disabled while hostname rules are present.
  if (!net["hostnames"].empty() && n.contains("dns") && n["dns"].is_null())
    return InvalidArgument("network.dns",
                           "network.dns cannot be null while network.hostnames has rules: "
                           "hostname rules resolve through the sandbox's DNS proxy");
  return net;
}

Result<json> ParseStartup(const json& body) {
  if (!body.contains("startup") || body["startup"].is_null()) return json(nullptr);
  const json& s = body["startup"];
  if (!s.is_object()) return InvalidArgument("startup", "startup must be an object");
  RETURN_IF_ERROR(
      CheckKnownFields(s, {"mode", "argv", "args", "entrypoint", "cwd", "user"}, "startup."));
  std::string mode = s.contains("argv") ? "command" : "image";
  if (s.contains("mode")) {
    if (!s["mode"].is_string() || (s["mode"] != "image" && s["mode"] != "command"))
      return InvalidArgument("startup.mode", "startup.mode must be \"image\" or \"command\"");
    mode = s["mode"];
  }
  json out = {{"mode", mode},          {"argv", nullptr}, {"args", nullptr},
              {"entrypoint", nullptr}, {"cwd", nullptr},  {"user", nullptr}};
  if (mode == "command") {
    if (!s.contains("argv"))
      return InvalidArgument("startup.argv", "command mode needs startup.argv");
    ASSIGN_OR_RETURN(out["argv"], StringArray(s["argv"], "startup.argv", false));
    if (out["argv"].empty())
      return InvalidArgument("startup.argv", "startup.argv must not be empty");
    if (out["argv"][0].get<std::string>().empty())
      return InvalidArgument("startup.argv", "startup.argv[0] must not be empty");
    for (const char* f : {"args", "entrypoint"}) {
      if (s.contains(f))
        return InvalidArgument(
            std::string("startup.") + f,
            std::string("startup.") + f + " applies to image mode; command mode takes argv only");
    }
  } else {
    if (s.contains("argv"))
      return InvalidArgument("startup.argv", "startup.argv applies to command mode");
    for (const char* f : {"args", "entrypoint"}) {
      if (s.contains(f)) {
        ASSIGN_OR_RETURN(out[f], StringArray(s[f], std::string("startup.") + f, true));
      }
    }
  }
  if (s.contains("cwd") && !s["cwd"].is_null()) {
    if (!s["cwd"].is_string() || s["cwd"].get<std::string>().empty() ||
        s["cwd"].get<std::string>()[0] != '/' || HasNul(s["cwd"].get<std::string>()) ||
        s["cwd"].get<std::string>().size() > 4096)
      return InvalidArgument("startup.cwd", "startup.cwd must be an absolute path");
    out["cwd"] = s["cwd"];
  }
  if (s.contains("user") && !s["user"].is_null()) {
    if (!s["user"].is_string() || s["user"].get<std::string>().empty() ||
        HasNul(s["user"].get<std::string>()) || s["user"].get<std::string>().size() > 256)
      return InvalidArgument("startup.user",
                             "startup.user must be \"uid[:gid]\" or \"name[:group]\"");
    out["user"] = s["user"];
  }
  return out;
}

Result<std::string> Choice(const json& body, const char* field,
                           std::initializer_list<const char*> allowed, const char* fallback,
                           std::initializer_list<const char*> unsupported) {
  if (!body.contains(field) || body[field].is_null()) return std::string(fallback);
  std::string options;
  for (const char* a : allowed) options += std::string(options.empty() ? "" : ", ") + a;
  if (!body[field].is_string())
    return InvalidArgument(field, std::string(field) + " must be one of " + options);
  std::string v = body[field];
  bool ok = false;
  for (const char* a : allowed) ok = ok || v == a;
  if (!ok) return InvalidArgument(field, std::string(field) + " must be one of " + options);
  for (const char* u : unsupported) {
    if (v == u)
      return Unsupported(field,
                         std::string(field) + " '" + v + "' is not supported yet on this host");
  }
  return v;
}

}  // namespace

Result<CreateSandboxRequest> ParseCreateSandbox(const json& body,
                                                const std::string& default_image) {
  if (!body.is_object()) return InvalidArgument("", "the request body must be a JSON object");
  RETURN_IF_ERROR(CheckKnownFields(
      body,
      {"cpu", "memoryMiB", "diskMiB", "ttlSeconds", "labels", "image", "imageId", "network",
       "startup", "env", "secrets", "gpu", "securityProfile", "startupClass", "storage"},
      ""));
  CreateSandboxRequest req;
  json& c = req.config;
  ASSIGN_OR_RETURN(c["cpu"],
                   IntegerIn(body, "cpu", limits::kCpuMin, limits::kCpuMax, limits::kCpuDefault));
  ASSIGN_OR_RETURN(c["memoryMiB"], IntegerIn(body, "memoryMiB", limits::kMemoryMiBMin,
                                             limits::kMemoryMiBMax, limits::kMemoryMiBDefault));
  ASSIGN_OR_RETURN(c["diskMiB"], IntegerIn(body, "diskMiB", limits::kDiskMiBMin,
                                           limits::kDiskMiBMax, limits::kDiskMiBDefault));
  if (body.contains("ttlSeconds") && body["ttlSeconds"].is_null()) {
    c["ttlSeconds"] = nullptr;
  } else {
    ASSIGN_OR_RETURN(c["ttlSeconds"],
                     IntegerIn(body, "ttlSeconds", limits::kTtlSecondsMin, limits::kTtlSecondsMax,
                               limits::kTtlSecondsDefault));
  }
  ASSIGN_OR_RETURN(c["labels"], ParseLabels(body));

  bool has_image = body.contains("image") && !body["image"].is_null();
  bool has_image_id = body.contains("imageId") && !body["imageId"].is_null();
  if (has_image && has_image_id)
    return InvalidArgument("imageId", "supply either image or imageId, not both");
  if (has_image_id) {
    const auto& id = body["imageId"];
    if (!id.is_string() || id.get<std::string>().size() > 64 ||
        !id.get<std::string>().starts_with("img_"))
      return InvalidArgument("imageId", "imageId must be the id of an image (\"img_...\")");
  }
  if (has_image) {
    if (!body["image"].is_string() || body["image"].get<std::string>().empty() ||
        body["image"].get<std::string>().size() > limits::kMaxImageReferenceBytes ||
        HasNul(body["image"].get<std::string>()))
      return InvalidArgument("image", "image must be an image reference such as \"debian:12\"");
    c["image"] = body["image"];
  } else {
    c["image"] = default_image;
  }
  // An imageId is resolved by the service to the organization's image reference.
  c["imageId"] = has_image_id ? body["imageId"] : nlohmann::json(nullptr);
  ASSIGN_OR_RETURN(c["network"], ParseNetwork(body));
  ASSIGN_OR_RETURN(c["startup"], ParseStartup(body));
  ASSIGN_OR_RETURN(req.env, ParseEnv(body));

  if (body.contains("secrets") && !body["secrets"].is_null()) {
    if (!body["secrets"].is_array())
      return InvalidArgument("secrets", "secrets must be an array of names");
    if (body["secrets"].size() > kMaxSandboxSecrets)
      return InvalidArgument("secrets", "at most " + std::to_string(kMaxSandboxSecrets) +
                                            " secrets can be attached to a sandbox");
    std::set<std::string> seen;
    for (size_t i = 0; i < body["secrets"].size(); ++i) {
      std::string field = "secrets[" + std::to_string(i) + "]";
      const json& name = body["secrets"][i];
      if (!name.is_string()) return InvalidArgument(field, field + " must be a secret name");
      RETURN_IF_ERROR(ValidateSecretName(name.get<std::string>(), field));
      if (!seen.insert(name.get<std::string>()).second)
        return InvalidArgument(field, "secret '" + name.get<std::string>() + "' is listed twice");
      req.secrets.push_back(name.get<std::string>());
    }
  }
  if (body.contains("gpu") && !body["gpu"].is_null()) {
    if (!body["gpu"].is_object())
      return InvalidArgument("gpu", "gpu must be an object such as {\"type\": \"...\"}");
    return Unsupported("gpu", "no GPU types are available on this host");
  }
  ASSIGN_OR_RETURN(
      c["securityProfile"],
      Choice(body, "securityProfile", {"restricted", "developer"}, "restricted", {"developer"}));
  bool has_storage = body.contains("storage") && !body["storage"].is_null();
  if (has_storage) {
    if (!body["storage"].is_string())
      return InvalidArgument("storage", "storage must be the name of persistent storage");
    RETURN_IF_ERROR(storage::ValidateVolumeName(body["storage"], "storage"));
  }
  ASSIGN_OR_RETURN(c["startupClass"],
                   Choice(body, "startupClass", {"durable", "instant"}, "instant", {}));
  // Naming storage asks for a durable sandbox unless startupClass says otherwise.
  if (has_storage && (!body.contains("startupClass") || body["startupClass"].is_null()))
    c["startupClass"] = "durable";
  if (c["startupClass"] == "instant" && has_storage)
    return InvalidArgument("storage",
                           "an instant sandbox has a disposable workspace and no persistent "
                           "attachment: use startupClass durable to mount storage");
  // A durable sandbox mounts its storage (the organization's default one when unnamed) at
  // /workspace.
  c["storage"] = c["startupClass"] == "durable"
                     ? (has_storage ? body["storage"] : json(storage::kDefaultVolumeName))
                     : json(nullptr);
  return req;
}

}  // namespace adapt::core
