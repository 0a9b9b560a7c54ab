#include "core/sandbox_request.h"

#include <set>

#include "core/sandbox_limits.h"

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

Result<json> ParseNetwork(const json& body) {
  json net = {
      {"egress", "none"}, {"allow", json::array()}, {"dns", nullptr}, {"hostnames", json::array()}};
  if (!body.contains("network") || body["network"].is_null()) return net;
  const json& n = body["network"];
  if (!n.is_object()) return InvalidArgument("network", "network must be an object");
  RETURN_IF_ERROR(CheckKnownFields(n, {"egress", "allow", "dns", "hostnames"}, "network."));
  if (n.contains("egress")) {
    if (!n["egress"].is_string())
      return InvalidArgument("network.egress",
                             "network.egress must be one of open, none, allowlist");
    std::string egress = n["egress"];
    if (egress != "open" && egress != "none" && egress != "allowlist")
      return InvalidArgument("network.egress",
                             "network.egress must be one of open, none, allowlist");
    if (egress != "none")
      return Unsupported("network.egress", "network egress '" + egress +
                                               "' is not supported yet on this host; use \"none\"");
  }
  for (const char* list : {"allow", "hostnames"}) {
    if (n.contains(list) && !n[list].is_null() && !(n[list].is_array() && n[list].empty()))
      return InvalidArgument(std::string("network.") + list,
                             std::string("network.") + list + " needs egress \"allowlist\"");
  }
  if (n.contains("dns") && !n["dns"].is_null())
    return InvalidArgument("network.dns", "network.dns needs network egress; it is \"none\"");
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
    if (!body["secrets"].empty())
      return Unsupported("secrets", "secrets are not supported yet on this host");
  }
  if (body.contains("gpu") && !body["gpu"].is_null()) {
    if (!body["gpu"].is_object())
      return InvalidArgument("gpu", "gpu must be an object such as {\"type\": \"...\"}");
    return Unsupported("gpu", "no GPU types are available on this host");
  }
  if (body.contains("storage") && !body["storage"].is_null()) {
    if (!body["storage"].is_string())
      return InvalidArgument("storage", "storage must be a storage name");
    return Unsupported("storage", "persistent storage is not supported yet on this host");
  }
  ASSIGN_OR_RETURN(
      c["securityProfile"],
      Choice(body, "securityProfile", {"restricted", "developer"}, "restricted", {"developer"}));
  ASSIGN_OR_RETURN(c["startupClass"],
                   Choice(body, "startupClass", {"durable", "instant"}, "instant", {"durable"}));
  return req;
}

}  // namespace adapt::core
